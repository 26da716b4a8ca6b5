/**
 * A/B of the bridge's HTTP pass-through between this checkout and another
 * (e.g. the commit before a change to the HTTP server): one anvil, one bridge
 * from each checkout (run from source), wrk against each in alternation
 * (rounds × seconds), and per bridge the median requests/s, the median p50
 * latency and the bridge's CPU time per request (µs, /proc: hardly moved by
 * other load on the machine). Prints B/A ratios.
 *
 * Usage: deno run -A scripts/bench/rpc_http_ab.ts OTHER_CHECKOUT [rounds=5] [seconds=3] [connections=16]
 * (OTHER_CHECKOUT is A, this one B). Needs `wrk`.
 *
 * @module
 */

import { startAnvil } from "../../tests/support/tools.ts";
import { offlineBridgeFlags, startBridgeProcess, tempPrivateKey } from "../../tests/support/rpc.ts";
import { threadsCpuUs as cpuUs } from "./proc.ts";
import { wrk as runWrk } from "./wrk.ts";

const other = Deno.args[0];
if (!other) {
  throw new Error("usage: rpc_http_ab.ts OTHER_CHECKOUT [rounds] [seconds] [connections]");
}
const rounds = Number(Deno.args[1] ?? 5);
const seconds = Number(Deno.args[2] ?? 3);
const conns = Number(Deno.args[3] ?? 16);
const here = new URL("../../", import.meta.url).pathname;
const BODY = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });

function wrk(url: string): Promise<{ rps: number; p50: number }> {
  return runWrk(url, BODY, { connections: conns, seconds });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const anvil = await startAnvil();
const key = await tempPrivateKey();
const flags = [...offlineBridgeFlags(key, anvil.url), "--http", "--quiet"];
const a = await startBridgeProcess(flags, {}, ["run", "-A", `${other}/main.ts`]);
const b = await startBridgeProcess(flags, {}, ["run", "-A", `${here}main.ts`]);
try {
  const results = new Map<string, { rps: number[]; p50: number[]; us: number[] }>();
  for (const [name] of [["A"], ["B"]]) results.set(name, { rps: [], p50: [], us: [] });
  for (const bridge of [a, b]) await wrk(bridge.address); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (
      const [name, bridge] of (r % 2 ? [["B", b], ["A", a]] : [["A", a], ["B", b]]) as [
        string,
        typeof a,
      ][]
    ) {
      const c0 = cpuUs(bridge.process.pid);
      const m = await wrk(bridge.address);
      const us = (cpuUs(bridge.process.pid) - c0) / (m.rps * seconds);
      const s = results.get(name)!;
      s.rps.push(m.rps);
      s.p50.push(m.p50);
      s.us.push(us);
    }
  }
  const A = results.get("A")!, B = results.get("B")!;
  console.table({
    A: { rps: median(A.rps), p50_ms: median(A.p50), bridge_us_per_req: median(A.us) },
    B: { rps: median(B.rps), p50_ms: median(B.p50), bridge_us_per_req: median(B.us) },
  });
  console.log(
    `B/A (c=${conns}, ${rounds}x${seconds}s): throughput ${
      (median(B.rps) / median(A.rps)).toFixed(2)
    }x, p50 ${(median(B.p50) / median(A.p50)).toFixed(2)}x, bridge CPU per request ${
      (median(B.us) / median(A.us)).toFixed(2)
    }x`,
  );
} finally {
  await a.stop();
  await b.stop();
  await anvil.stop();
  await Deno.remove(key);
}
