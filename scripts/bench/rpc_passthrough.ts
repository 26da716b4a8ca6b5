/**
 * Pass-through overhead of `service rpc`: the same load (wrk over HTTP, our
 * ipc_load.ts over IPC, same concurrency) straight to anvil and through the
 * bridge, in one run. Prints throughput ratios and the added median latency.
 *
 * Usage: deno task bench:rpc  (or deno run -A scripts/bench/rpc_passthrough.ts [seconds=5] [connections=16])
 * Needs `wrk` (apt-get install -y wrk).
 *
 * @module
 */

import { startAnvil } from "../../tests/support/tools.ts";
import { startBridgeProcess, tempPrivateKey } from "../../tests/support/rpc.ts";

const seconds = Number(Deno.args[0] ?? 5);
const connections = Number(Deno.args[1] ?? 16);
const here = new URL(".", import.meta.url).pathname;

const BODIES = {
  eth_blockNumber: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
  "eth_call 1KB": JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "eth_call",
    params: [{
      to: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
      data: "0x" + "ab".repeat(500),
    }, "latest"],
  }),
};

async function wrk(
  url: string,
  body: string,
  conns = connections,
): Promise<{ rps: number; p50: number }> {
  const lua = await Deno.makeTempFile({ suffix: ".lua" });
  await Deno.writeTextFile(
    lua,
    `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${
      JSON.stringify(body)
    }\n`,
  );
  const out = await new Deno.Command("wrk", {
    args: [conns > 1 ? "-t2" : "-t1", `-c${conns}`, `-d${seconds}s`, "--latency", "-s", lua, url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  await Deno.remove(lua);
  const text = new TextDecoder().decode(out.stdout);
  const rps = Number(text.match(/Requests\/sec:\s+([\d.]+)/)?.[1]);
  const m = text.match(/\s50%\s+([\d.]+)(us|ms|s)/);
  const p50 = m ? Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1) : NaN;
  if (/Non-2xx/.test(text)) console.error("warning: wrk saw non-2xx answers:\n" + text);
  return { rps, p50 };
}

async function ipcLoad(
  path: string,
  body: string,
  conns = connections,
): Promise<{ rps: number; p50: number }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${here}ipc_load.ts`, path, body, String(conns), String(seconds)],
    stdout: "piped",
  }).output();
  const r = JSON.parse(new TextDecoder().decode(out.stdout));
  return { rps: r.rps, p50: r.p50_ms };
}

const ipcDir = await Deno.makeTempDir();
const anvilIpc = `${ipcDir}/anvil.ipc`;
const anvil = await startAnvil(["--ipc", anvilIpc]);
const key = await tempPrivateKey();
const common = [
  "--apiKey",
  "bench",
  "--privateKey",
  key,
  "--apiBaseUrl",
  "http://127.0.0.1:9",
  "--rpcUrl",
  anvil.url,
  "--assetId",
  "ETH",
];
const http = await startBridgeProcess([...common, "--http"]);
const ipc = await startBridgeProcess(common);
try {
  for (let i = 0; i < 50 && !(await Deno.lstat(anvilIpc).catch(() => undefined)); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const rows: Record<string, unknown>[] = [];
  for (const [name, body] of Object.entries(BODIES)) {
    await wrk(http.address, body); // warm-up
    const direct = await wrk(anvil.url, body);
    const via = await wrk(http.address, body);
    rows.push({
      transport: "http",
      method: name,
      anvil_rps: Math.round(direct.rps),
      bridge_rps: Math.round(via.rps),
      ratio: Number((via.rps / direct.rps).toFixed(2)),
      anvil_p50_ms: Number(direct.p50.toFixed(3)),
      bridge_p50_ms: via.p50,
      added_p50_ms: Number((via.p50 - direct.p50).toFixed(3)),
    });
    // Latency without queueing: one connection.
    const d1 = await wrk(anvil.url, body, 1);
    const v1 = await wrk(http.address, body, 1);
    rows.push({
      transport: "http c=1",
      method: name,
      anvil_rps: Math.round(d1.rps),
      bridge_rps: Math.round(v1.rps),
      ratio: Number((v1.rps / d1.rps).toFixed(2)),
      anvil_p50_ms: d1.p50,
      bridge_p50_ms: v1.p50,
      added_p50_ms: Number((v1.p50 - d1.p50).toFixed(3)),
    });
    const idirect = await ipcLoad(anvilIpc, body);
    const ivia = await ipcLoad(ipc.address, body);
    rows.push({
      transport: "ipc",
      method: name,
      anvil_rps: idirect.rps,
      bridge_rps: ivia.rps,
      ratio: Number((ivia.rps / idirect.rps).toFixed(2)),
      anvil_p50_ms: idirect.p50,
      bridge_p50_ms: ivia.p50,
      added_p50_ms: Number((ivia.p50 - idirect.p50).toFixed(3)),
    });
    const i1 = await ipcLoad(anvilIpc, body, 1);
    const iv1 = await ipcLoad(ipc.address, body, 1);
    rows.push({
      transport: "ipc c=1",
      method: name,
      anvil_rps: i1.rps,
      bridge_rps: iv1.rps,
      ratio: Number((iv1.rps / i1.rps).toFixed(2)),
      anvil_p50_ms: i1.p50,
      bridge_p50_ms: iv1.p50,
      added_p50_ms: Number((iv1.p50 - i1.p50).toFixed(3)),
    });
  }
  console.log(`connections=${connections} seconds=${seconds}`);
  console.table(rows);
} finally {
  await http.stop();
  await ipc.stop();
  await anvil.stop();
  await Deno.remove(key);
  await Deno.remove(ipcDir, { recursive: true }).catch(() => {});
}
