/**
 * One envelope rule for single requests and batch elements, whatever the
 * node accepts: the bridge validates the request, answers with the caller's
 * own id and the node's result, over HTTP and IPC, with the node reached over
 * HTTP or its IPC socket. The oracle is anvil's own answer to the same call
 * with a plain id. And the batch size limit (`--maxBatch`, default 1,000), and
 * `--verbose`'s trace of every message and its answer.
 * Real anvil, bridges started as a user starts them.
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
import { waitFor } from "../support/wait_for.ts";

const ACCOUNT = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const PARAMS = `[${JSON.stringify(ACCOUNT)},"0x0"]`; // the balance at genesis never changes

let anvil: Anvil;
let ipcDir: string;
let keyPath: string;
let http: BridgeProcess;
let ipc: BridgeProcess;
let viaNodeIpc: BridgeProcess;
let small: BridgeProcess;
let expected: unknown; // anvil's own result

function common(rpcUrl: string): string[] {
  return offlineBridgeFlags(keyPath, rpcUrl);
}

Deno.test.beforeAll(async () => {
  ipcDir = await Deno.makeTempDir();
  anvil = await startAnvil(["--ipc", `${ipcDir}/anvil.ipc`]);
  await waitFor(
    "anvil's IPC socket",
    () => Deno.lstat(`${ipcDir}/anvil.ipc`).catch(() => undefined),
    5_000,
  );
  keyPath = await tempPrivateKey();
  [http, ipc, viaNodeIpc, small] = await Promise.all([
    startBridgeProcess([...common(anvil.url), "--http"]),
    startBridgeProcess(common(anvil.url)),
    startBridgeProcess([...common(`${ipcDir}/anvil.ipc`), "--http"]),
    startBridgeProcess([...common(anvil.url), "--http", "--maxBatch", "2", "--verbose"]),
  ]);
  const direct = await httpRpc(
    anvil.url,
    `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":${PARAMS}}`,
  );
  expected = (direct.json() as { result: unknown }).result;
  assert.match(String(expected), /^0x[0-9a-f]+$/);
});

Deno.test.afterAll(async () => {
  await Promise.all([http?.stop(), ipc?.stop(), viaNodeIpc?.stop(), small?.stop()]);
  await anvil?.stop();
  await Deno.remove(keyPath).catch(() => {});
  await Deno.remove(ipcDir, { recursive: true }).catch(() => {});
});

/** Ids as written on the wire; anvil itself refuses several of them. */
const IDS = [
  "1.5",
  "1.0",
  "1e2",
  "-1",
  "0",
  "18446744073709551616",
  "9007199254740993",
  '"\\u0041"',
  '"x\\"y"',
  "null",
];

const body = (idText: string, extra = "") =>
  `{"jsonrpc":"2.0","id":${idText},"method":"eth_getBalance","params":${PARAMS}${extra}}`;

async function overIpc(path: string, text: string): Promise<unknown> {
  const c = await IpcClient.connect(path);
  try {
    await c.write(text + "\n");
    return JSON.parse((await c.readLine())!);
  } finally {
    c.close();
  }
}

Deno.test("anvil alone answers id 1.5 with id null and an error (the quirk the bridge hides)", async () => {
  const r = await httpRpc(anvil.url, body("1.5"));
  const a = r.json() as { id: unknown; error?: unknown };
  assert.equal(a.id, null);
  assert.ok(a.error);
});

Deno.test("single and batch: the caller's own id and the node's result, for every id", async () => {
  for (const idText of IDS) {
    const want = { jsonrpc: "2.0", id: JSON.parse(idText), result: expected };
    for (const [name, address] of [["http", http.address], ["node ipc", viaNodeIpc.address]]) {
      const single = await httpRpc(address, body(idText));
      assert.equal(single.status, 200, `${name} ${idText}`);
      assert.deepEqual(single.json(), want, `${name} single, id ${idText}`);
      const batch = await httpRpc(address, `[${body(idText)},${body(idText)}]`);
      assert.deepEqual(batch.json(), [want, want], `${name} batch, id ${idText}`);
    }
    assert.deepEqual(await overIpc(ipc.address, body(idText)), want, `ipc single, id ${idText}`);
    assert.deepEqual(
      await overIpc(ipc.address, `[${body(idText)}]`),
      [want],
      `ipc batch, id ${idText}`,
    );
  }
});

Deno.test("members beyond the envelope are ignored alike in a single request and in a batch", async () => {
  // anvil refuses unknown members; the bridge sends the node the envelope only.
  const extra = ',"extra":{"x":1}';
  const want = { jsonrpc: "2.0", id: 7, result: expected };
  assert.deepEqual((await httpRpc(http.address, body("7", extra))).json(), want);
  assert.deepEqual((await httpRpc(http.address, `[${body("7", extra)}]`)).json(), [want]);
});

Deno.test("an invalid request gets the same error alone and inside a batch", async () => {
  for (
    const bad of [
      '{"jsonrpc":"1.0","id":3,"method":"eth_blockNumber"}',
      '{"jsonrpc":"2.0","id":3,"method":""}',
      '{"jsonrpc":"2.0","id":3,"method":"eth_blockNumber","params":5}',
    ]
  ) {
    const single = (await httpRpc(http.address, bad)).json() as { id: unknown; error: unknown };
    const [inBatch] = (await httpRpc(http.address, `[${bad}]`)).json() as unknown[];
    assert.deepEqual(single, inBatch, bad);
    assert.equal(single.id, 3);
    assert.equal((single.error as { code: number }).code, -32600);
  }
});

Deno.test("a batch over the limit is refused whole with one -32600 naming the limit; at the limit it runs", async () => {
  const item = (i: number) => ({ jsonrpc: "2.0", id: i, method: "eth_chainId" });
  const over = await httpRpc(http.address, Array.from({ length: 1001 }, (_, i) => item(i)));
  assert.equal(over.status, 400);
  const e = over.json() as { id: unknown; error: { code: number; message: string } };
  assert.equal(e.id, null);
  assert.equal(e.error.code, -32600);
  assert.match(e.error.message, /1001 requests; the limit is 1000/);
  const at = await httpRpc(http.address, Array.from({ length: 1000 }, (_, i) => item(i)));
  assert.equal(at.status, 200);
  assert.equal((at.json() as unknown[]).length, 1000);
  // the same over IPC
  const ipcOver = await overIpc(
    ipc.address,
    JSON.stringify(Array.from({ length: 1001 }, (_, i) => item(i))),
  ) as { error: { code: number } };
  assert.equal(ipcOver.error.code, -32600);
});

Deno.test("--maxBatch sets the limit", async () => {
  const item = (i: number) => ({ jsonrpc: "2.0", id: i, method: "eth_chainId" });
  const over = await httpRpc(small.address, [item(1), item(2), item(3)]);
  assert.match((over.json() as { error: { message: string } }).error.message, /the limit is 2\b/);
  const at = await httpRpc(small.address, [item(1), item(2)]);
  assert.deepEqual((at.json() as { id: number }[]).map((a) => a.id), [1, 2]);
});

Deno.test("--verbose prints every message and its answer with its time; a long one is cut", async () => {
  const before = small.stderr().length;
  const body = `{"jsonrpc":"2.0","id":"trace-1","method":"eth_getBalance","params":${PARAMS}}`;
  assert.equal((await httpRpc(small.address, body)).status, 200);
  const long = JSON.stringify({
    jsonrpc: "2.0",
    id: "trace-2",
    method: "eth_call",
    params: [{ to: ACCOUNT, data: "0x" + "ab".repeat(1000) }, "latest"],
  });
  assert.equal((await httpRpc(small.address, long)).status, 200);
  const text = await waitFor(
    () => `the answer to trace-2 in the trace:\n${small.stderr().slice(before)}`,
    () => {
      const text = small.stderr().slice(before);
      return /<- \{[^\n]*"trace-2"/.test(text) ? text : undefined;
    },
    5_000,
  );
  assert.ok(text.includes(`-> ${body}\n`), text);
  assert.match(
    text,
    new RegExp(
      `<- \\{"jsonrpc":"2\\.0","id":"trace-1","result":"${expected}"\\} \\(\\d+\\.\\d ms\\)\n`,
    ),
  );
  assert.ok(text.includes(`-> ${long.slice(0, 400)}… (${long.length} characters)\n`), text);
  assert.ok(!text.includes(long.slice(0, 401)), "cut at 400 characters");
});
