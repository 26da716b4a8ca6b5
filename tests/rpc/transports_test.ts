/**
 * The bridge's transports against a real anvil, started as a user starts it
 * (`main.ts rpc`, no child). The platform is not needed for reads: the
 * credentials point at a closed port, so a signing request fails cleanly.
 */
import assert from "node:assert/strict";
import { type Anvil, startAnvil } from "../support/tools.ts";
import { mainCommand } from "../support/main_command.ts";
import { waitFor } from "../support/wait_for.ts";
import {
  type BridgeProcess,
  httpRpc,
  IpcClient,
  offlineBridgeFlags,
  startBridgeProcess,
  tempPrivateKey,
} from "../support/rpc.ts";

let anvil: Anvil;
let keyPath: string;
let http: BridgeProcess;
let ipc: BridgeProcess;

function common(rpcUrl: string) {
  return offlineBridgeFlags(keyPath, rpcUrl);
}

const req = (method: string, params: unknown[] = [], id: unknown = 1) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});

Deno.test.beforeAll(async () => {
  anvil = await startAnvil();
  keyPath = await tempPrivateKey();
  [http, ipc] = await Promise.all([
    startBridgeProcess([...common(anvil.url), "--http"]),
    startBridgeProcess(common(anvil.url)),
  ]);
});

Deno.test.afterAll(async () => {
  await Promise.all([http?.stop(), ipc?.stop()]);
  await anvil?.stop();
  await Deno.remove(keyPath).catch(() => {});
});

Deno.test("HTTP address is loopback with a random per-run path", () => {
  assert.match(http.address, /^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}$/);
  assert.ok(!http.address.includes("test-key"));
});

Deno.test("a read passes through and equals anvil's own answer", async () => {
  const direct = await httpRpc(
    anvil.url,
    req("eth_getBalance", [
      "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
      "latest",
    ]),
  );
  const via = await httpRpc(
    http.address,
    req("eth_getBalance", ["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "latest"]),
  );
  assert.equal(via.status, 200);
  assert.deepEqual(via.json(), direct.json());
});

Deno.test("a batch returns every result, notifications get no element", async () => {
  const r = await httpRpc(http.address, [
    req("eth_blockNumber", [], 1),
    req("eth_chainId", [], "two"),
    { jsonrpc: "2.0", method: "eth_blockNumber", params: [] },
    req("net_version", [], 3),
    req("eth_getBalance", ["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "latest"], 4),
    { jsonrpc: "2.0", id: 5 },
  ]);
  assert.equal(r.status, 200);
  const items = r.json() as { id: unknown; result?: unknown; error?: { code: number } }[];
  assert.equal(items.length, 5);
  const byId = new Map(items.map((i) => [i.id, i]));
  assert.equal(byId.get(1)?.result, "0x0");
  assert.equal(byId.get("two")?.result, "0x7a69");
  assert.equal(byId.get(3)?.result, "31337");
  assert.match(String(byId.get(4)?.result), /^0x[0-9a-f]+$/);
  assert.equal(byId.get(5)?.error?.code, -32600);
});

Deno.test("an empty batch is -32600, bad JSON is -32700, both as JSON with HTTP 400", async () => {
  const empty = await httpRpc(http.address, "[]");
  assert.equal(empty.status, 400);
  assert.equal((empty.json() as { error: { code: number } }).error.code, -32600);
  const bad = await httpRpc(http.address, '{"jsonrpc":"2.0",');
  assert.equal(bad.status, 400);
  assert.match(bad.headers.get("content-type") ?? "", /application\/json/);
  assert.equal((bad.json() as { error: { code: number } }).error.code, -32700);
});

Deno.test("a notification over HTTP gets no body", async () => {
  const r = await httpRpc(http.address, { jsonrpc: "2.0", method: "eth_blockNumber" });
  assert.equal(r.status, 204);
  assert.equal(r.text, "");
});

Deno.test("a 12 MB request body is accepted", async () => {
  const r = await httpRpc(http.address, req("web3_clientVersion", ["x".repeat(12_000_000)]));
  assert.equal(r.status, 200);
  assert.match(String((r.json() as { result: string }).result), /^service\//);
});

Deno.test("a web page's request (Origin header) is refused and nothing runs", async () => {
  const r = await httpRpc(http.address, req("eth_accounts"), { origin: "http://evil.example" });
  assert.equal(r.status, 403);
  assert.equal(r.headers.get("access-control-allow-origin"), null);
  assert.match((r.json() as { error: { message: string } }).error.message, /--allowOrigin/);
});

Deno.test("a non-loopback Host (DNS rebinding) is refused", async () => {
  const u = new URL(http.address);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(u.port) });
  const body = JSON.stringify(req("eth_chainId"));
  await conn.write(
    new TextEncoder().encode(
      `POST ${u.pathname} HTTP/1.1\r\nHost: attacker.example:${u.port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    ),
  );
  let text = "";
  const buf = new Uint8Array(4096);
  for (;;) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  conn.close();
  assert.match(text, /^HTTP\/1\.1 403/);
  assert.match(text, /loopback/);
});

/**
 * Requests one after another on one raw keep-alive connection: the answers' status lines and
 * bodies, in order (each answer read whole by its Content-Length before the next is sent).
 */
async function onOneConnection(port: number, requests: string[]): Promise<[string, string][]> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const out: [string, string][] = [];
  let buf = "";
  const buffer = new Uint8Array(65536);
  try {
    for (const request of requests) {
      await conn.write(enc.encode(request));
      for (;;) {
        const end = buf.indexOf("\r\n\r\n");
        const length = end === -1
          ? NaN
          : Number(/content-length: *(\d+)/i.exec(buf.slice(0, end))?.[1]);
        if (end !== -1 && buf.length >= end + 4 + length) {
          out.push([buf.slice(0, buf.indexOf("\r\n")), buf.slice(end + 4, end + 4 + length)]);
          buf = buf.slice(end + 4 + length);
          break;
        }
        const n = await conn.read(buffer);
        if (n === null) throw new Error(`the connection closed after ${out.length} answers`);
        buf += dec.decode(buffer.subarray(0, n));
      }
    }
    return out;
  } finally {
    conn.close();
  }
}

Deno.test("a kept-alive connection's later requests get the same checks (Host, Origin, path) and ids", async () => {
  // The first request of a connection is served by the bridge's own HTTP/1.1, the later ones by
  // the runtime's server, whose headers and body the bridge reads another way (http_engine.ts).
  const u = new URL(http.address);
  const post = (path: string, body: string, extra = "", host = `127.0.0.1:${u.port}`) =>
    `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n${extra}` +
    `Content-Length: ${new TextEncoder().encode(body).length}\r\n\r\n${body}`;
  const chainId = (id: unknown) => JSON.stringify(req("eth_chainId", [], id));
  const answers = await onOneConnection(Number(u.port), [
    post(u.pathname, chainId(1)),
    post(u.pathname, chainId(2), "", `attacker.example:${u.port}`),
    post(u.pathname, chainId(3), "Origin: https://evil.example\r\n"),
    post("/", chainId(4)),
    post(u.pathname, '{"jsonrpc":"2.0","id":5,'),
    post(u.pathname, '{"jsonrpc":"2.0","id":1e400,"method":"eth_chainId","params":[],"x":"ü"}'),
    post(u.pathname, chainId("seven")),
  ]);
  const [ok1, host, origin, path, broken, exact, ok7] = answers;
  assert.equal(ok1[0], "HTTP/1.1 200 OK");
  assert.equal(JSON.parse(ok1[1]).result, "0x7a69");
  assert.match(host[0], /^HTTP\/1\.1 403/);
  assert.match(host[1], /not a loopback name/);
  assert.match(origin[0], /^HTTP\/1\.1 403/);
  assert.match(origin[1], /--allowOrigin/);
  assert.match(path[0], /^HTTP\/1\.1 404/);
  assert.match(broken[0], /^HTTP\/1\.1 400/);
  assert.equal(JSON.parse(broken[1]).error.code, -32700);
  assert.match(exact[1], /^\{"jsonrpc":"2\.0","id":1e400,"result":"0x7a69"\}$/);
  assert.deepEqual(JSON.parse(ok7[1]), { jsonrpc: "2.0", id: "seven", result: "0x7a69" });
});

Deno.test("a wrong path is refused with a JSON error", async () => {
  const u = new URL(http.address);
  const r = await httpRpc(`${u.origin}/`, req("eth_chainId"));
  assert.equal(r.status, 404);
  assert.equal((r.json() as { error: { code: number } }).error.code, -32600);
});

Deno.test("IPC socket is 0600 in a private 0700 directory", async () => {
  const st = await Deno.stat(ipc.address);
  assert.equal(st.mode! & 0o777, 0o600);
  const dir = ipc.address.slice(0, ipc.address.lastIndexOf("/"));
  assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
});

Deno.test("IPC: a request split across writes and pipelined requests are all answered", async () => {
  const c = await IpcClient.connect(ipc.address);
  try {
    const a = JSON.stringify(req("eth_chainId", [], 1));
    const b = JSON.stringify(req("eth_blockNumber", [], 2));
    const d = JSON.stringify([req("net_version", [], 3), req("eth_chainId", [], 4)]);
    // a notification first: it must get no answer line
    await c.write(JSON.stringify({ jsonrpc: "2.0", method: "eth_blockNumber" }) + "\n");
    await c.write(a.slice(0, 10));
    await new Promise((r) => setTimeout(r, 30));
    await c.write(a.slice(10) + b + "\n" + d.slice(0, 5));
    await new Promise((r) => setTimeout(r, 30));
    await c.write(d.slice(5));
    const lines = [await c.readLine(), await c.readLine(), await c.readLine()].map((l) =>
      JSON.parse(l!)
    );
    const single = lines.filter((l) => !Array.isArray(l));
    const batch = lines.find((l) => Array.isArray(l));
    assert.deepEqual(single.map((l) => l.id).sort(), [1, 2]);
    assert.equal(batch?.length, 2);
    await c.write(JSON.stringify(req("eth_chainId", [], 99)) + "\n");
    assert.equal(JSON.parse((await c.readLine())!).id, 99, "no answer to the notification");
  } finally {
    c.close();
  }
});

Deno.test("IPC: a 5 MB request is answered", async () => {
  const c = await IpcClient.connect(ipc.address);
  try {
    await c.write(JSON.stringify(req("web3_clientVersion", ["0x" + "ab".repeat(2_500_000)], 9)));
    const r = JSON.parse((await c.readLine(20_000))!);
    assert.equal(r.id, 9);
    assert.match(r.result, /^service\//);
  } finally {
    c.close();
  }
});

Deno.test("IPC: garbage gets -32700 and drops only that connection", async () => {
  const other = await IpcClient.connect(ipc.address);
  const c = await IpcClient.connect(ipc.address);
  try {
    await c.write("\x00\x01garbage{}");
    const r = JSON.parse((await c.readLine())!);
    assert.equal(r.error.code, -32700);
    assert.equal(await c.readLine(), undefined); // closed by the bridge
    await other.write(JSON.stringify(req("eth_chainId", [], 5)) + "\n");
    assert.equal(JSON.parse((await other.readLine())!).result, "0x7a69");
    const fresh = await IpcClient.connect(ipc.address);
    await fresh.write(JSON.stringify(req("eth_chainId", [], 6)) + "\n");
    assert.equal(JSON.parse((await fresh.readLine())!).id, 6);
    fresh.close();
  } finally {
    c.close();
    other.close();
  }
});

Deno.test("the node going down gives a JSON-RPC error per request; the bridge stays up", async () => {
  const spare = await startAnvil();
  const b = await startBridgeProcess([...common(spare.url), "--http"]);
  try {
    await spare.stop();
    const r = await httpRpc(b.address, [req("eth_blockNumber", [], 1), req("eth_gasPrice", [], 2)]);
    const items = r.json() as { id: number; error: { code: number; message: string } }[];
    assert.equal(items.length, 2);
    for (const i of items) assert.equal(i.error.code, -32002);
    const local = await httpRpc(b.address, req("eth_chainId", [], 3));
    assert.equal((local.json() as { result: string }).result, "0x7a69");
  } finally {
    await b.stop();
  }
});

Deno.test("a stale socket file is replaced; a live one is never taken over", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/node.ipc`;
  // A socket file with nobody listening, as a crash leaves it: a process that exits without closing.
  const crashed = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `Deno.listen({ transport: "unix", path: ${JSON.stringify(path)} }); Deno.exit(0);`,
    ],
  }).output();
  assert.equal(crashed.code, 0);
  assert.ok((await Deno.lstat(path)).isSocket, "a stale socket file is present");
  const b = await startBridgeProcess([...common(anvil.url), "--ipcPath", path]);
  try {
    assert.equal(b.address, path);
    const c = await IpcClient.connect(path);
    await c.write(JSON.stringify(req("eth_chainId")) + "\n");
    assert.equal(JSON.parse((await c.readLine())!).result, "0x7a69");
    c.close();
    // A second bridge on the same live path refuses to start: it exits by itself with code 2,
    // naming the path, and prints no address. (The abort only ends a hang, which then fails.)
    const second = await mainCommand(["rpc", ...common(anvil.url), "--ipcPath", path], {
      signal: AbortSignal.timeout(20_000),
    }).output();
    const stderr = new TextDecoder().decode(second.stderr);
    assert.equal(second.signal, null, `killed after hanging: ${stderr}`);
    assert.equal(second.code, 2, stderr);
    assert.equal(new TextDecoder().decode(second.stdout), "");
    assert.equal(
      stderr,
      `error: Cannot listen on ${path}: another server is answering on it. Stop it or choose another --ipcPath.\n`,
    );
    // and the first one still answers
    const again = await IpcClient.connect(path);
    await again.write(JSON.stringify(req("eth_chainId", [], 2)) + "\n");
    assert.equal(JSON.parse((await again.readLine())!).result, "0x7a69");
    again.close();
  } finally {
    assert.equal(await b.stop(), 0);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--allowOrigin lets exactly that page in (CORS echo + preflight); others stay refused", async () => {
  const b = await startBridgeProcess([
    ...common(anvil.url),
    "--http",
    "--allowOrigin",
    "http://localhost:3000",
  ]);
  try {
    const pre = await fetch(b.address, {
      method: "OPTIONS",
      headers: { origin: "http://localhost:3000", "access-control-request-method": "POST" },
    });
    await pre.body?.cancel();
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get("access-control-allow-origin"), "http://localhost:3000");
    const ok = await httpRpc(b.address, req("eth_chainId"), { origin: "http://localhost:3000" });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get("access-control-allow-origin"), "http://localhost:3000");
    const other = await httpRpc(b.address, req("eth_chainId"), { origin: "http://localhost:3001" });
    assert.equal(other.status, 403);
  } finally {
    await b.stop();
  }
});

Deno.test("the Brownie form /<API_KEY> is accepted only with --apiKeyPath, and never printed", async () => {
  const plain = new URL(http.address);
  const refused = await httpRpc(`${plain.origin}/test-key`, req("eth_chainId"));
  assert.equal(refused.status, 404);
  const b = await startBridgeProcess([...common(anvil.url), "--http", "--apiKeyPath"]);
  try {
    assert.ok(!b.address.includes("test-key"));
    const u = new URL(b.address);
    const ok = await httpRpc(`${u.origin}/test-key`, req("eth_chainId"));
    assert.equal((ok.json() as { result: string }).result, "0x7a69");
  } finally {
    await b.stop();
  }
});

Deno.test("300 concurrent pass-through requests (batched upstream when busy) each get their own answer", async () => {
  const inputs = Array.from(
    { length: 300 },
    (_, i) => "0x" + (i + 1).toString(16).padStart(4, "0"),
  );
  const direct = await httpRpc(
    anvil.url,
    inputs.map((x, i) => req("web3_sha3", [x], i)),
  );
  const expected = new Map(
    (direct.json() as { id: number; result: string }[]).map((a) => [a.id, a.result]),
  );
  const answers = await Promise.all(inputs.map(async (x, i) => {
    const id = `client-${i}`; // every caller's own id, some clients reuse the same one
    const r = await httpRpc(http.address, req("web3_sha3", [x], i % 2 ? id : 1));
    return { i, sent: i % 2 ? id : 1, body: r.json() as { id: unknown; result: string } };
  }));
  for (const a of answers) {
    assert.equal(a.body.id, a.sent);
    assert.equal(a.body.result, expected.get(a.i));
  }
  // the same over one IPC connection, pipelined
  const c = await IpcClient.connect(ipc.address);
  try {
    await c.write(inputs.map((x, i) => JSON.stringify(req("web3_sha3", [x], i))).join("\n"));
    for (let n = 0; n < inputs.length; n++) {
      const a = JSON.parse((await c.readLine())!);
      assert.equal(a.result, expected.get(a.id));
    }
  } finally {
    c.close();
  }
});

Deno.test("signing methods never reach the node (anvil would sign with its own dev keys)", async () => {
  const anvilAccount = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"; // unlocked in anvil
  for (
    const [method, params] of [
      ["personal_unlockAccount", [anvilAccount, "", 0]],
      ["eth_signTypedData_v1", [[{ type: "string", name: "a", value: "b" }], anvilAccount]],
      ["personal_importRawKey", ["11".repeat(32), ""]],
    ] as const
  ) {
    const r = await httpRpc(http.address, req(method, [...params]));
    assert.equal((r.json() as { error: { code: number } }).error.code, -32601, method);
  }
  // subscriptions are refused here, not half-served
  const sub = await httpRpc(http.address, req("eth_subscribe", ["newHeads"]));
  assert.equal((sub.json() as { error: { code: number } }).error.code, -32601);
  // and in a batch
  const b = await httpRpc(http.address, [
    req("personal_newAccount", [""], 1),
    req("eth_chainId", [], 2),
  ]);
  const items = b.json() as { id: number; error?: { code: number }; result?: string }[];
  assert.equal(items.find((i) => i.id === 1)?.error?.code, -32601);
  assert.equal(items.find((i) => i.id === 2)?.result, "0x7a69");
});

Deno.test("--rpcUrl may be the node's IPC socket (anvil --ipc): reads, batches, chain check", async () => {
  const dir = await Deno.makeTempDir();
  const nodeIpc = `${dir}/anvil.ipc`;
  const node = await startAnvil(["--ipc", nodeIpc]);
  try {
    await waitFor("anvil's IPC socket", () => Deno.lstat(nodeIpc).catch(() => undefined), 5_000);
    const b = await startBridgeProcess([...common(nodeIpc), "--http"]);
    try {
      const one = await httpRpc(
        b.address,
        req("eth_getBalance", [
          "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
          "latest",
        ]),
      );
      const direct = await httpRpc(
        node.url,
        req("eth_getBalance", [
          "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
          "latest",
        ]),
      );
      assert.deepEqual(one.json(), direct.json());
      const many = await Promise.all(
        Array.from(
          { length: 50 },
          (_, i) => httpRpc(b.address, req("web3_sha3", ["0x0" + (i % 10)], i)),
        ),
      );
      for (const [i, r] of many.entries()) assert.equal((r.json() as { id: number }).id, i);
      const batch = await httpRpc(b.address, [
        req("eth_blockNumber", [], 1),
        req("eth_chainId", [], 2),
      ]);
      assert.equal((batch.json() as unknown[]).length, 2);
    } finally {
      await b.stop();
    }
  } finally {
    await node.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
