/**
 * WebSocket pass-through overhead of `service rpc --http`: the same closed
 * loop load (ws_load.ts, 16 connections by default) straight to anvil's own
 * WebSocket and through the bridge's `ws://` address, in one run, alternated
 * twice. Prints the throughput ratio (target ≥ 0.5) and the added median
 * latency (target ≤ 0.3 ms), plus the one-connection latency, the bridge's
 * CPU time per request (user + system, from /proc: steadier than latency on
 * a shared machine) and a RESULT line per target (the mean of the two
 * 16-connection rounds).
 *
 * In a closed loop the median is about connections / throughput, so with 16
 * connections the added p50 is 16 × (1/bridge_rps − 1/anvil_rps): on two
 * cores shared by the load generator, anvil and the bridge it follows the
 * bridge's CPU per request.
 *
 * The bridge runs as the npm package runs it (`program.ts`; `BRIDGE_SOURCE=1`
 * runs `main.ts`).
 *
 * Usage: deno run -A scripts/bench/ws_passthrough.ts [seconds=5] [connections=16]
 *
 * @module
 */

import { startAnvil } from "../../tests/support/tools.ts";
import { offlineBridgeFlags, startBridgeProcess, tempPrivateKey } from "../../tests/support/rpc.ts";
import { benchProgram } from "./program.ts";
import { cpuMs } from "./proc.ts";

const seconds = Number(Deno.args[0] ?? 5);
const connections = Number(Deno.args[1] ?? 16);
const here = new URL(".", import.meta.url).pathname;
const BODY = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });

async function load(
  url: string,
  conns: number,
  pid?: number,
): Promise<{ rps: number; p50: number; cpuUsPerRequest: number }> {
  const before = pid ? cpuMs(pid) : 0;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${here}ws_load.ts`, url, BODY, String(conns), String(seconds)],
    stdout: "piped",
  }).output();
  const r = JSON.parse(new TextDecoder().decode(out.stdout));
  if (r.errors) console.error(`warning: ${r.errors} errors from ${url}`);
  const cpu = pid ? cpuMs(pid) - before : NaN;
  return { rps: r.rps, p50: r.p50_ms, cpuUsPerRequest: (cpu * 1000) / (r.rps * seconds) };
}

const anvil = await startAnvil();
const key = await tempPrivateKey();
const program = await benchProgram();
const bridge = await startBridgeProcess(
  [...offlineBridgeFlags(key, anvil.url), "--http"],
  {},
  program.rpcArgs,
);
console.log(`bridge: ${program.description}, V8 flags: ${program.rpcV8Flags || "V8's defaults"}`);
const anvilWs = `ws://127.0.0.1:${anvil.port}`;
const bridgeWs = bridge.address.replace(/^http:/, "ws:");
try {
  await load(bridgeWs, connections); // warm-up
  const rows: Record<string, unknown>[] = [];
  for (const conns of [connections, connections, 1]) {
    const direct = await load(anvilWs, conns);
    const via = await load(bridgeWs, conns, bridge.process.pid);
    rows.push({
      connections: conns,
      anvil_rps: direct.rps,
      bridge_rps: via.rps,
      ratio: Number((via.rps / direct.rps).toFixed(2)),
      anvil_p50_ms: direct.p50,
      bridge_p50_ms: via.p50,
      added_p50_ms: Number((via.p50 - direct.p50).toFixed(3)),
      bridge_cpu_us_per_request: Number(via.cpuUsPerRequest.toFixed(1)),
    });
  }
  console.log(`eth_blockNumber over WebSocket, seconds=${seconds}`);
  console.table(rows);
  const busy = rows.slice(0, 2);
  const mean = (key: string) => busy.reduce((a, r) => a + (r[key] as number), 0) / busy.length;
  const ratio = mean("ratio");
  const added = mean("added_p50_ms");
  console.log(
    `RESULT ws pass-through, ${connections} connections: throughput ratio ${
      ratio.toFixed(2)
    } (target >= 0.5: ${ratio >= 0.5 ? "met" : "missed"}); added p50 ${
      added.toFixed(3)
    } ms (target <= 0.3 ms: ${added <= 0.3 ? "met" : "missed"}); bridge CPU ${
      mean("bridge_cpu_us_per_request").toFixed(1)
    } us/request; load average ${Deno.loadavg()[0].toFixed(2)}`,
  );
} finally {
  await bridge.stop();
  await anvil.stop();
  await Deno.remove(key);
  await program.cleanup();
}
