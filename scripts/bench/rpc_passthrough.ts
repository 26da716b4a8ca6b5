/**
 * Pass-through overhead of `service rpc`: the same load (wrk over HTTP, our
 * ipc_load.ts over IPC, same concurrency) straight to anvil and through the
 * bridge, in one run. Prints throughput ratios and the added median latency,
 * and the CPU time the bridge and anvil spent per request (µs, from
 * /proc/<pid>/task/<tid>/stat): unlike throughput, that figure hardly moves
 * when other processes share the machine, so it shows where the time goes.
 *
 * Usage: deno run -A scripts/bench/rpc_passthrough.ts [seconds=5] [connections=16]
 * Needs `wrk` (apt-get install -y wrk). `BRIDGE_V8_FLAGS=--max-semi-space-size=4` starts
 * the bridges with those V8 flags (`DENO_V8_FLAGS`).
 *
 * @module
 */

import { startAnvil } from "../../tests/support/tools.ts";
import { offlineBridgeFlags, startBridgeProcess, tempPrivateKey } from "../../tests/support/rpc.ts";
import { threadsCpuUs as cpuUs } from "./proc.ts";
import { wrk as runWrk } from "./wrk.ts";

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

/** Runs `load` and adds the CPU µs per request of `bridge` and anvil. */
async function withCpu(
  bridgePid: number | undefined,
  load: () => Promise<{ rps: number; p50: number }>,
): Promise<{ rps: number; p50: number; bridgeUs: number; anvilUs: number }> {
  const b0 = bridgePid ? cpuUs(bridgePid) : 0, a0 = cpuUs(anvil.process.pid);
  const r = await load();
  const n = r.rps * seconds;
  return {
    ...r,
    bridgeUs: bridgePid ? Number(((cpuUs(bridgePid) - b0) / n).toFixed(1)) : 0,
    anvilUs: Number(((cpuUs(anvil.process.pid) - a0) / n).toFixed(1)),
  };
}

function wrk(
  url: string,
  body: string,
  conns = connections,
): Promise<{ rps: number; p50: number }> {
  return runWrk(url, body, { connections: conns, seconds });
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
for (let i = 0; i < 50 && !(await Deno.lstat(anvilIpc).catch(() => undefined)); i++) {
  await new Promise((r) => setTimeout(r, 100));
}
const key = await tempPrivateKey();
const common = [...offlineBridgeFlags(key, anvil.url)];
const v8Flags = Deno.env.get("BRIDGE_V8_FLAGS");
const bridgeEnv: Record<string, string> = v8Flags ? { DENO_V8_FLAGS: v8Flags } : {};
const http = await startBridgeProcess([...common, "--http"], bridgeEnv);
const ipc = await startBridgeProcess(common, bridgeEnv);
// The bridge reading from anvil's own IPC socket (IPC in, IPC out).
const ipcToIpc = await startBridgeProcess(
  common.map((a) => (a === anvil.url ? anvilIpc : a)),
  bridgeEnv,
);
try {
  const rows: Record<string, unknown>[] = [];
  type Measured = Awaited<ReturnType<typeof withCpu>>;
  const row = (transport: string, method: string, direct: Measured, via: Measured) =>
    rows.push({
      transport,
      method,
      anvil_rps: Math.round(direct.rps),
      bridge_rps: Math.round(via.rps),
      ratio: Number((via.rps / direct.rps).toFixed(2)),
      anvil_p50_ms: Number(direct.p50.toFixed(3)),
      bridge_p50_ms: via.p50,
      added_p50_ms: Number((via.p50 - direct.p50).toFixed(3)),
      // CPU µs per request: anvil alone; then the bridge and anvil behind it.
      anvil_us: direct.anvilUs,
      bridge_us: via.bridgeUs,
      anvil_behind_us: via.anvilUs,
    });
  const pid = (b: { process: Deno.ChildProcess }) => b.process.pid;
  for (const [name, body] of Object.entries(BODIES)) {
    await wrk(http.address, body); // warm-up
    row(
      "http",
      name,
      await withCpu(undefined, () => wrk(anvil.url, body)),
      await withCpu(pid(http), () => wrk(http.address, body)),
    );
    // Latency without queueing: one connection.
    row(
      "http c=1",
      name,
      await withCpu(undefined, () => wrk(anvil.url, body, 1)),
      await withCpu(pid(http), () => wrk(http.address, body, 1)),
    );
    const idirect = await withCpu(undefined, () => ipcLoad(anvilIpc, body));
    row("ipc", name, idirect, await withCpu(pid(ipc), () => ipcLoad(ipc.address, body)));
    row(
      "ipc→ipc",
      name,
      idirect,
      await withCpu(pid(ipcToIpc), () => ipcLoad(ipcToIpc.address, body)),
    );
    row(
      "ipc c=1",
      name,
      await withCpu(undefined, () => ipcLoad(anvilIpc, body, 1)),
      await withCpu(pid(ipc), () => ipcLoad(ipc.address, body, 1)),
    );
  }
  console.log(`connections=${connections} seconds=${seconds} v8Flags=${v8Flags ?? ""}`);
  console.table(rows);
  // The targets, one line each.
  const find = (transport: string, method: string) =>
    rows.find((r) => r.transport === transport && r.method === method)!;
  const atLeast = (name: string, target: number, measured: number) =>
    console.log(
      `${name}: target >= ${target}x, measured ${measured}x: ${
        measured >= target ? "met" : "missed"
      }`,
    );
  atLeast(
    `HTTP ${connections} conns eth_blockNumber vs anvil`,
    0.75,
    find("http", "eth_blockNumber").ratio as number,
  );
  atLeast(
    `HTTP ${connections} conns eth_call 1KB vs anvil`,
    0.75,
    find("http", "eth_call 1KB").ratio as number,
  );
  for (const method of Object.keys(BODIES)) {
    const added = find("http c=1", method).added_p50_ms as number;
    console.log(
      `HTTP 1 conn ${method} added p50: target <= 0.1 ms, measured ${added} ms: ${
        added <= 0.1 ? "met" : "missed"
      }`,
    );
  }
  for (const method of Object.keys(BODIES)) {
    atLeast(
      `IPC ${connections} conns ${method}, IPC node, vs anvil's IPC`,
      0.6,
      find("ipc→ipc", method).ratio as number,
    );
    atLeast(
      `IPC ${connections} conns ${method}, HTTP node, vs anvil's IPC`,
      0.5,
      find("ipc", method).ratio as number,
    );
  }
} finally {
  await http.stop();
  await ipc.stop();
  await ipcToIpc.stop();
  await anvil.stop();
  await Deno.remove(key);
  await Deno.remove(ipcDir, { recursive: true }).catch(() => {});
}
