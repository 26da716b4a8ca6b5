/**
 * WebSocket pass-through overhead of `service rpc --http`: the same closed
 * loop load (ws_load.ts, 16 connections by default) straight to anvil's own
 * WebSocket and through the bridge's `ws://` address, in one run, alternated
 * twice. Prints the throughput ratio (target ≥ 0.5) and the added median
 * latency (target ≤ 0.3 ms), plus the one-connection latency.
 *
 * Usage: deno run -A scripts/bench/ws_passthrough.ts [seconds=5] [connections=16]
 *
 * @module
 */

import { startAnvil } from "../../tests/support/tools.ts";
import { offlineBridgeFlags, startBridgeProcess, tempPrivateKey } from "../../tests/support/rpc.ts";

const seconds = Number(Deno.args[0] ?? 5);
const connections = Number(Deno.args[1] ?? 16);
const here = new URL(".", import.meta.url).pathname;
const BODY = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });

async function load(url: string, conns: number): Promise<{ rps: number; p50: number }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${here}ws_load.ts`, url, BODY, String(conns), String(seconds)],
    stdout: "piped",
  }).output();
  const r = JSON.parse(new TextDecoder().decode(out.stdout));
  if (r.errors) console.error(`warning: ${r.errors} errors from ${url}`);
  return { rps: r.rps, p50: r.p50_ms };
}

const anvil = await startAnvil();
const key = await tempPrivateKey();
const bridge = await startBridgeProcess([...offlineBridgeFlags(key, anvil.url), "--http"]);
const anvilWs = `ws://127.0.0.1:${anvil.port}`;
const bridgeWs = bridge.address.replace(/^http:/, "ws:");
try {
  await load(bridgeWs, connections); // warm-up
  const rows: Record<string, unknown>[] = [];
  for (const conns of [connections, connections, 1]) {
    const direct = await load(anvilWs, conns);
    const via = await load(bridgeWs, conns);
    rows.push({
      connections: conns,
      anvil_rps: direct.rps,
      bridge_rps: via.rps,
      ratio: Number((via.rps / direct.rps).toFixed(2)),
      anvil_p50_ms: direct.p50,
      bridge_p50_ms: via.p50,
      added_p50_ms: Number((via.p50 - direct.p50).toFixed(3)),
    });
  }
  console.log(`eth_blockNumber over WebSocket, seconds=${seconds}`);
  console.table(rows);
} finally {
  await bridge.stop();
  await anvil.stop();
  await Deno.remove(key);
}
