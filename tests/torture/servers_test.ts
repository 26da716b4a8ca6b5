/**
 * The long-running servers stay up and keep answering others through hostile
 * clients: slow-loris connections (headers or a JSON frame trickled one byte
 * at a time, and many idle ones), malformed request lines, deeply nested and
 * oversized bodies. Servers: `service emulator` (HTTP API) and `service rpc`
 * (HTTP and IPC), each a real process.
 *
 * Already covered elsewhere (not repeated here): split and pipelined IPC
 * writes, a 5 MB IPC frame and IPC garbage (`tests/rpc/transports_test.ts`:
 * "IPC: a request split across writes and pipelined requests are all
 * answered", "IPC: a 5 MB request is answered", "IPC: garbage gets -32700
 * and drops only that connection"), a 12 MB HTTP body and bad JSON over HTTP
 * ("a 12 MB request body is accepted", "an empty batch is -32600, bad JSON is
 * -32700, both as JSON with HTTP 400"), forged, expired and replayed request
 * tokens (`tests/emulator/auth_test.ts`: "request authentication"), and
 * replay across a restart (`tests/emulator/restart_test.ts`).
 */

import assert from "node:assert/strict";
import { type Anvil, startAnvil } from "../support/tools.ts";
import {
  type BridgeProcess,
  httpRpc,
  IpcClient,
  offlineBridgeFlags,
  startBridgeProcess,
  tempPrivateKey,
} from "../support/rpc.ts";
import { type EmulatorProcess, startEmulatorProcess } from "../support/emulator_process.ts";
import { claimsFor, signClaims } from "../support/emulator_fixture.ts";

let anvil: Anvil;
let keyPath: string;
let http: BridgeProcess;
let ipc: BridgeProcess;
let emu: EmulatorProcess;

const enc = new TextEncoder();
const CHAIN_ID = { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] };

Deno.test.beforeAll(async () => {
  anvil = await startAnvil();
  keyPath = await tempPrivateKey();
  const common = offlineBridgeFlags(keyPath, anvil.url);
  [http, ipc, emu] = await Promise.all([
    startBridgeProcess([...common, "--http"]),
    startBridgeProcess(common),
    startEmulatorProcess(anvil.url),
  ]);
});

Deno.test.afterAll(async () => {
  await Promise.all([http?.stop(), ipc?.stop(), emu?.stop()]);
  await anvil?.stop();
  await Deno.remove(keyPath).catch(() => {});
});

/** Alive: the process has not exited. */
async function alive(p: Deno.ChildProcess): Promise<boolean> {
  const r = await Promise.race([
    p.status.then(() => false),
    new Promise<boolean>((res) => setTimeout(() => res(true), 50)),
  ]);
  return r;
}

function hostPort(url: string): { hostname: string; port: number } {
  const u = new URL(url);
  return { hostname: u.hostname, port: Number(u.port) };
}

/**
 * Opens `n` connections that send `head` and then one byte every 100 ms
 * (never finishing), runs `during` meanwhile, then closes them all.
 */
async function slowLoris<T>(
  open: () => Promise<Deno.Conn>,
  head: string,
  n: number,
  during: () => Promise<T>,
): Promise<T> {
  const conns = await Promise.all(Array.from({ length: n }, open));
  let stop = false;
  const drip = Promise.all(conns.map(async (c) => {
    try {
      await c.write(enc.encode(head));
      for (let k = 0; k < 10 && !stop; k++) {
        await new Promise((r) => setTimeout(r, 100));
        await c.write(enc.encode("a"));
      }
    } catch { /* the server may close a slow connection: that is allowed */ }
  }));
  try {
    return await during();
  } finally {
    stop = true;
    await drip;
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
  }
}

Deno.test("torture: 200 slow-loris connections do not stop the emulator answering a signed request", async () => {
  const { hostname, port } = hostPort(emu.ready.apiBaseUrl);
  const r = await slowLoris(
    () => Deno.connect({ hostname, port }),
    "GET /v1/vault/accounts_paged HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",
    200,
    () => emu.api("GET", "/v1/vault/accounts/0"),
  );
  assert.equal(r.status, 200);
  assert.equal(await alive(emu.process), true);
  assert.equal((await emu.api("GET", "/v1/vault/accounts/1")).status, 200);
});

Deno.test("torture: 200 slow-loris connections do not stop the rpc HTTP bridge", async () => {
  const { hostname, port } = hostPort(http.address);
  const path = new URL(http.address).pathname;
  const r = await slowLoris(
    () => Deno.connect({ hostname, port }),
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":`,
    200,
    () => httpRpc(http.address, CHAIN_ID),
  );
  assert.equal(r.status, 200);
  assert.equal((r.json() as { result: string }).result, "0x7a69");
  assert.equal(await alive(http.process), true);
});

Deno.test("torture: 100 IPC connections trickling an unfinished frame do not stop the IPC bridge", async () => {
  const r = await slowLoris(
    () => Deno.connect({ transport: "unix", path: ipc.address }),
    '{"jsonrpc":"2.0","id":1,"method":"eth_ch',
    100,
    async () => {
      const c = await IpcClient.connect(ipc.address);
      try {
        await c.write(JSON.stringify({ ...CHAIN_ID, id: 7 }) + "\n");
        return JSON.parse((await c.readLine())!);
      } finally {
        c.close();
      }
    },
  );
  assert.deepEqual([r.id, r.result], [7, "0x7a69"]);
  assert.equal(await alive(ipc.process), true);
});

/** A raw exchange over TCP: what the server answers (status line) or "" when it closes. */
async function raw(url: string, bytes: Uint8Array): Promise<string> {
  const c = await Deno.connect(hostPort(url));
  try {
    await c.write(bytes).catch(() => 0);
    const buf = new Uint8Array(4096);
    const n = await Promise.race([
      c.read(buf).catch(() => null),
      new Promise<null>((r) => setTimeout(() => r(null), 5000)),
    ]);
    return n ? new TextDecoder().decode(buf.subarray(0, n)).split("\r\n")[0] : "";
  } finally {
    try {
      c.close();
    } catch { /* closed */ }
  }
}

Deno.test("torture: malformed request lines, nested and oversized bodies get an answer and the emulator stays up", async () => {
  const base = emu.ready.apiBaseUrl;
  for (
    const bytes of [
      enc.encode("\x00\x01\x02\x03 garbage\r\n\r\n"),
      enc.encode("GET / HTTP/9.9\r\n\r\n"),
      enc.encode("POST /v1/transactions HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"),
      enc.encode(`GET /${"a".repeat(200_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
    ]
  ) {
    const status = await raw(base, bytes);
    assert.ok(status === "" || /^HTTP\/1\.1 4\d\d/.test(status), `answered ${status}`);
  }
  // a signed, deeply nested body: a 400 naming the body, not a crash
  const pem = await Deno.readTextFile(emu.ready.privateKeyPath);
  const nested = "[".repeat(100_000) + "]".repeat(100_000);
  const token = await signClaims(
    pem,
    await claimsFor(emu.ready.apiKey, "/v1/transactions", nested),
  );
  const deep = await fetch(`${base}/v1/transactions`, {
    method: "POST",
    headers: {
      "X-API-Key": emu.ready.apiKey,
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
    },
    body: nested,
  });
  assert.equal(deep.status, 400, await deep.clone().text());
  assert.match(JSON.stringify(await deep.json()), /message/);
  // a 20 MB body: refused by size (the limit is 1 MiB), never buffered whole
  const big = await fetch(`${base}/v1/transactions`, {
    method: "POST",
    headers: { "X-API-Key": emu.ready.apiKey, "Content-Type": "application/json" },
    body: "x".repeat(20 * 1024 * 1024),
  }).catch((e) => e as Error);
  if (big instanceof Response) {
    assert.equal(big.status, 413);
    await big.body?.cancel();
  } // else the server closed the connection mid-upload: also a refusal
  assert.equal(await alive(emu.process), true);
  assert.equal((await emu.api("GET", "/v1/vault/accounts/0")).status, 200);
});

Deno.test("torture: nested JSON-RPC bodies are answered -32600 over HTTP and IPC", async () => {
  const nested = "[".repeat(100_000) + "]".repeat(100_000);
  const h = await httpRpc(http.address, nested);
  const answer = h.json() as { error: { code: number } }[];
  assert.equal(answer[0].error.code, -32600);
  const c = await IpcClient.connect(ipc.address);
  try {
    await c.write(nested + "\n");
    const line = JSON.parse((await c.readLine(20_000))!);
    assert.equal(line[0].error.code, -32600);
    await c.write(JSON.stringify({ ...CHAIN_ID, id: 8 }) + "\n");
    assert.equal(JSON.parse((await c.readLine())!).id, 8);
  } finally {
    c.close();
  }
  assert.equal(await alive(http.process), true);
  assert.equal(await alive(ipc.process), true);
});

/**
 * A body of `mib` MiB of spaces, streamed (no Content-Length), made as it is
 * read; after `holdAt` MiB it waits for `release` (so that bodies overlap).
 */
function streamedBody(mib: number, holdAt: number, release: Promise<void>) {
  const chunk = new Uint8Array(1024 * 1024).fill(32);
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      if (sent === holdAt) await release;
      if (sent++ < mib) c.enqueue(chunk);
      else c.close();
    },
  });
}

Deno.test("torture: concurrent 60 MB bodies to the rpc HTTP bridge: past 128 MiB held at once, 503", async () => {
  let release = () => {};
  const released = new Promise<void>((r) => release = r);
  const answers = Array.from({ length: 4 }, async () => {
    const r = await fetch(http.address, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: streamedBody(60, 50, released),
    }).catch(() => undefined);
    await r?.body?.cancel();
    return r?.status ?? 0;
  });
  // four bodies hold 50 MiB each until one is refused: 4 x 50 MiB > 128 MiB
  const first = await Promise.race(answers);
  release();
  const statuses = await Promise.all(answers);
  // one is refused while the others hold their bodies (on a loaded machine another may first
  // fail on its own, reset or unreadable: the refusal must still be among the answers)
  assert.ok(first === 503 || statuses.includes(503), `statuses ${statuses}`);
  assert.ok(statuses.every((s) => [503, 400, 0, 200].includes(s)), `statuses ${statuses}`);
  assert.equal(await alive(http.process), true);
  assert.equal((await httpRpc(http.address, CHAIN_ID)).status, 200);
});

Deno.test("torture: a Host of [::1]evil.com or localhost:evil is refused by the rpc bridge (DNS rebinding)", async () => {
  const path = new URL(http.address).pathname;
  const body = JSON.stringify(CHAIN_ID);
  for (const host of ["[::1]evil.com", "[::1]:80evil.com", "localhost:evil.com"]) {
    const status = await raw(
      http.address,
      enc.encode(
        `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      ),
    );
    assert.ok(/^HTTP\/1\.1 (403|400)/.test(status), `${host}: ${status}`);
  }
  const ok = await raw(
    http.address,
    enc.encode(
      `POST ${path} HTTP/1.1\r\nHost: [::1]:8545\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    ),
  );
  assert.equal(ok, "HTTP/1.1 200 OK");
});

Deno.test("torture: ids 1e400, 30 digits, -0 and 1.50 come back exactly as sent (HTTP batch and IPC)", async () => {
  const ids = ["1e400", "123456789012345678901234567890", "-0", "1.50"];
  const batch = "[" +
    ids.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[]}`).join(",") +
    "]";
  const h = await httpRpc(http.address, batch);
  for (const id of ids) assert.ok(h.text.includes(`"id":${id},`), `${id} in ${h.text}`);
  const c = await IpcClient.connect(ipc.address);
  try {
    for (const id of ids) {
      await c.write(`{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[]}\n`);
      const line = (await c.readLine())!;
      assert.ok(line.startsWith(`{"jsonrpc":"2.0","id":${id},`), line);
    }
  } finally {
    c.close();
  }
});
