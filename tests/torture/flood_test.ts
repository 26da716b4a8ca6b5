/**
 * Connection floods (issue 25): under `ulimit -n 256`, 300 idle connections
 * that never send a byte (any local process, or a web page, can open them)
 * leave `service rpc --http` and `service emulator` answering valid requests
 * during the flood and after it. Before the bounded server the bridge ended
 * with `Too many open files` and the emulator never answered HTTP again.
 */

import assert from "node:assert/strict";
import { type Anvil, startAnvil } from "../support/tools.ts";
import {
  type BridgeProcess,
  httpRpc,
  offlineBridgeFlags,
  startBridgeProcess,
  tempPrivateKey,
} from "../support/rpc.ts";
import { type EmulatorProcess, startEmulatorProcess } from "../support/emulator_process.ts";

const FILE_LIMIT = 256;
const FLOOD = 300;
const CHAIN_ID = { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] };

let anvil: Anvil;
let keyPath: string;

Deno.test.beforeAll(async () => {
  anvil = await startAnvil();
  keyPath = await tempPrivateKey();
});

Deno.test.afterAll(async () => {
  await anvil?.stop();
  await Deno.remove(keyPath).catch(() => {});
});

/** Opens `n` TCP connections that send nothing; returns them once all are connected. */
async function flood(hostname: string, port: number, n: number): Promise<Deno.Conn[]> {
  const conns: Deno.Conn[] = [];
  // A few at a time: the listen backlog is finite, and a full one makes connect() wait.
  for (let i = 0; i < n; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, () => Deno.connect({ hostname, port })),
    );
    conns.push(...batch);
  }
  return conns;
}

function closeAll(conns: Deno.Conn[]): void {
  for (const c of conns) {
    try {
      c.close();
    } catch { /* the server closed it */ }
  }
}

async function alive(p: Deno.ChildProcess): Promise<boolean> {
  return await Promise.race([
    p.status.then(() => false),
    new Promise<boolean>((res) => setTimeout(() => res(true), 100)),
  ]);
}

Deno.test("torture: 300 idle connections under ulimit -n 256 leave the rpc HTTP bridge answering", async () => {
  let bridge: BridgeProcess | undefined;
  let conns: Deno.Conn[] = [];
  try {
    bridge = await startBridgeProcess(
      [...offlineBridgeFlags(keyPath, anvil.url), "--http"],
      {},
      undefined,
      { fileLimit: FILE_LIMIT },
    );
    const u = new URL(bridge.address);
    conns = await flood(u.hostname, Number(u.port), FLOOD);
    const during = await httpRpc(bridge.address, CHAIN_ID);
    assert.equal(during.status, 200, during.text);
    assert.equal((during.json() as { result: string }).result, "0x7a69");
    closeAll(conns);
    conns = await flood(u.hostname, Number(u.port), FLOOD);
    closeAll(conns);
    const after = await httpRpc(bridge.address, { ...CHAIN_ID, id: 2 });
    assert.equal((after.json() as { result: string }).result, "0x7a69");
    assert.equal(await alive(bridge.process), true, bridge.stderr());
    assert.doesNotMatch(bridge.stderr(), /Too many open files|Uncaught/);
  } finally {
    closeAll(conns);
    await bridge?.stop();
  }
});

Deno.test("torture: 300 idle connections under ulimit -n 256 leave the emulator answering", async () => {
  let emu: EmulatorProcess | undefined;
  let conns: Deno.Conn[] = [];
  try {
    emu = await startEmulatorProcess(anvil.url, [], { fileLimit: FILE_LIMIT });
    const u = new URL(emu.ready.apiBaseUrl);
    conns = await flood(u.hostname, Number(u.port), FLOOD);
    assert.equal((await emu.api("GET", "/v1/vault/accounts/0")).status, 200);
    closeAll(conns);
    conns = await flood(u.hostname, Number(u.port), FLOOD);
    closeAll(conns);
    assert.equal((await emu.api("GET", "/v1/vault/accounts/1")).status, 200);
    assert.equal(await alive(emu.process), true, emu.stderr());
  } finally {
    closeAll(conns);
    await emu?.stop();
  }
});
