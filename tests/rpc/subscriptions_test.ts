/**
 * WebSocket on the HTTP address and subscriptions (WebSocket and IPC),
 * in-process bridges over a real anvil: answers identical to HTTP, refusals
 * before the upgrade, `newHeads` and `logs` compared with anvil's own
 * WebSocket subscriptions (the independent oracle), a reorg replayed from the
 * fork point, pending transactions, no state left for closed connections,
 * and backpressure (IPC stops reading; a WebSocket that does not read is
 * dropped with a close reason).
 */
import assert from "node:assert/strict";
import { encodeFunctionData, pad, toEventSelector } from "viem";
import { type Anvil, startAnvil } from "../support/tools.ts";
import { httpRpc, IpcClient } from "../support/rpc.ts";
import { IpcRpc, WsRpc } from "../support/ws_client.ts";
import { rawHandshake, readUntilClose, sendText } from "../support/ws_raw.ts";
import { type Bridge, connectUpstream, startBridge } from "../../lib/rpc/mod.ts";
import { Dispatcher } from "../../lib/rpc/methods.ts";
import { serveIpc } from "../../lib/rpc/ipc.ts";
import { createHttpHandler, serveHttp } from "../../lib/rpc/http.ts";
import { createWebSocketHandler } from "../../lib/rpc/ws.ts";
import { SubscriptionHub } from "../../lib/rpc/subscriptions.ts";
import { waitFor } from "../support/wait_for.ts";

const COUNTER = JSON.parse(
  await Deno.readTextFile(new URL("../fixtures/contracts/Counter.json", import.meta.url)),
);
const INCREMENTED = toEventSelector("Incremented(address,uint256)");
const A0 = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
const A1 = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";

let anvil: Anvil;
let http: Bridge;
let ipc: Bridge;
let counter: string;

// deno-lint-ignore no-explicit-any -- JSON answers of anvil, read field by field
async function node(method: string, params: unknown[] = []): Promise<any> {
  const r = await fetch(anvil.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const j = await r.json();
  if (j.error) throw new Error(`${method}: ${j.error.message}`);
  return j.result;
}

async function increment(from: string): Promise<string> {
  return await node("eth_sendTransaction", [{
    from,
    to: counter,
    data: encodeFunctionData({ abi: COUNTER.abi, functionName: "increment" }),
  }]);
}

Deno.test.beforeAll(async () => {
  anvil = await startAnvil();
  const options = { chainId: 31337n, clientVersion: "test", subscriptionPollMs: 50 };
  http = await startBridge({ ...options, upstream: connectUpstream(anvil.url), transport: "http" });
  ipc = await startBridge({ ...options, upstream: connectUpstream(anvil.url), transport: "ipc" });
  const hash = await node("eth_sendTransaction", [{ from: A0, data: COUNTER.bytecode }]);
  // anvil mines at once, but under load the receipt can trail the answer by a moment
  const receipt = await waitFor(
    "the deployment's receipt",
    () => node("eth_getTransactionReceipt", [hash]),
    10_000,
    5,
  );
  counter = receipt.contractAddress;
});

Deno.test.afterAll(async () => {
  await http?.close();
  await ipc?.close();
  await anvil?.stop();
});

Deno.test("WebSocket on the HTTP address answers exactly as HTTP: single, batch, errors", async () => {
  assert.equal(http.wsAddress, http.address.replace(/^http:/, "ws:"));
  const ws = await WsRpc.connect(http.wsAddress!);
  try {
    const messages: [unknown, unknown][] = [
      [{ jsonrpc: "2.0", id: 7, method: "eth_chainId" }, 7],
      [{ jsonrpc: "2.0", id: "s", method: "eth_getBalance", params: [A1, "latest"] }, "s"],
      [{ jsonrpc: "2.0", id: 8, method: "no_such_method" }, 8],
      [{ jsonrpc: "2.0", id: 9, method: "eth_signTransaction", params: [{}] }, 9],
      [{ jsonrpc: "1.0", id: 10, method: "eth_chainId" }, 10],
      [[
        { jsonrpc: "2.0", id: 1, method: "eth_chainId" },
        { jsonrpc: "2.0", id: 2, method: "eth_blockNumber" },
        { bad: true },
        { jsonrpc: "2.0", id: 3, method: "personal_newAccount", params: [""] },
      ], "batch"],
    ];
    for (const [message, key] of messages) {
      const overWs = await ws.raw(message, key);
      const overHttp = (await httpRpc(http.address, message)).json();
      assert.deepEqual(overWs, overHttp, JSON.stringify(message));
    }
    const garbage = await ws.raw("{not json", null) as { error: { code: number } };
    assert.equal(garbage.error.code, -32700);
    // the connection survives garbage, as geth's does
    assert.equal(await ws.request("eth_chainId"), "0x7a69");
    // subscriptions need a stream: HTTP still refuses them
    const sub = (await httpRpc(http.address, {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_subscribe",
      params: ["newHeads"],
    })).json() as { error: { code: number } };
    assert.equal(sub.error.code, -32601);
  } finally {
    await ws.close();
  }
});

Deno.test("WebSocket upgrades get the HTTP checks first: token, Host, Origin refused before 101", async () => {
  const url = new URL(http.wsAddress!);
  const cases: [string, Record<string, string>, number, RegExp][] = [
    [`ws://${url.host}/wrong-token`, {}, 404, /exact address/],
    [http.wsAddress!, { Host: "evil.example" }, 403, /not a loopback name/],
    [http.wsAddress!, { Origin: "https://evil.example" }, 403, /web pages/],
  ];
  for (const [target, headers, status, body] of cases) {
    const h = await rawHandshake(target, headers);
    h.conn.close();
    assert.equal(h.status, status, h.text);
    assert.match(h.text, body);
    assert.match(h.text, /"jsonrpc":"2.0"/);
  }
  const ok = await rawHandshake(http.wsAddress!);
  ok.conn.close();
  assert.equal(ok.status, 101, ok.text);
});

Deno.test("newHeads over WebSocket: every block once, in order, shaped exactly as anvil's own", async () => {
  const bridgeWs = await WsRpc.connect(http.wsAddress!);
  const anvilWs = await WsRpc.connect(`ws://127.0.0.1:${anvil.port}`);
  try {
    const ours = await bridgeWs.request("eth_subscribe", ["newHeads"]) as string;
    const theirs = await anvilWs.request("eth_subscribe", ["newHeads"]) as string;
    assert.match(ours, /^0x[0-9a-f]{32}$/);
    for (let i = 0; i < 4; i++) await node("evm_mine");
    for (let i = 0; i < 4; i++) {
      const a = await bridgeWs.next(ours);
      const b = await anvilWs.next(theirs);
      assert.deepEqual(a, b);
    }
    // the envelope itself, as geth and anvil send it
    const raw = bridgeWs.notifications[0];
    assert.deepEqual(Object.keys(raw), ["jsonrpc", "method", "params"]);
    assert.equal(raw.jsonrpc, "2.0");
    assert.equal(raw.method, "eth_subscription");
    assert.deepEqual(Object.keys(raw.params as object), ["subscription", "result"]);
    assert.equal(await bridgeWs.request("eth_unsubscribe", [ours]), true);
    assert.equal(await bridgeWs.request("eth_unsubscribe", [ours]), false);
    // after unsubscribing, the next block reaches anvil's subscriber and not ours
    const before = bridgeWs.notifications.length;
    await node("evm_mine");
    await anvilWs.next(theirs);
    const marker = await bridgeWs.request("eth_subscribe", ["newHeads"]) as string;
    await node("evm_mine");
    await bridgeWs.next(marker);
    assert.equal(bridgeWs.notifications.length, before + 1);
  } finally {
    await bridgeWs.close();
    await anvilWs.close();
  }
});

Deno.test("subscription ids are unique per connection; connections share them and stay independent", async () => {
  const a = await WsRpc.connect(http.wsAddress!);
  const b = await WsRpc.connect(http.wsAddress!);
  try {
    // one connection: every subscription gets its own id, each gets every block once
    const a1 = await a.request("eth_subscribe", ["newHeads"]) as string;
    const a2 = await a.request("eth_subscribe", ["newHeads"]) as string;
    const a3 = await a.request("eth_subscribe", ["logs", {}]) as string;
    assert.equal(new Set([a1, a2, a3]).size, 3);
    for (const id of [a1, a2, a3]) assert.match(id, /^0x[0-9a-f]{32}$/);
    // another connection's first subscription carries the same id as a's first (ids belong
    // to a connection; sharing them lets one notification text serve every subscriber)
    const b1 = await b.request("eth_subscribe", ["newHeads"]) as string;
    assert.equal(b1, a1);
    await node("evm_mine");
    const block = await a.next(a1) as { hash: string };
    assert.deepEqual(await a.next(a2), block);
    assert.deepEqual(await b.next(b1), block);
    // unsubscribing on one connection ends only that connection's subscription
    assert.equal(await a.request("eth_unsubscribe", [a1]), true);
    assert.equal(await b.request("eth_unsubscribe", [a2]), false, "b holds no a2");
    assert.equal(http.hub.subscriptions, 3);
    const before = { a: a.notifications.length, b: b.notifications.length };
    await node("evm_mine");
    const next = await a.next(a2) as { hash: string; parentHash: string };
    assert.equal(next.parentHash, block.hash);
    assert.deepEqual(await b.next(b1), next);
    // a got only a2's block (a1 is gone, the empty block has no logs for a3); b got its own
    assert.equal(a.notifications.length, before.a + 1);
    assert.equal(b.notifications.length, before.b + 1);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("logs: address and topic filters select the same logs as anvil's own subscription", async () => {
  const ws = await WsRpc.connect(http.wsAddress!);
  const anvilWs = await WsRpc.connect(`ws://127.0.0.1:${anvil.port}`);
  try {
    const byA0 = { address: counter, topics: [INCREMENTED, pad(A0 as `0x${string}`)] };
    const byA1 = { address: [counter], topics: [null, [pad(A1 as `0x${string}`)]] };
    const any = { address: counter };
    const subs = [] as [string, string][];
    for (const f of [byA0, byA1, any]) {
      subs.push([
        await ws.request("eth_subscribe", ["logs", f]) as string,
        await anvilWs.request("eth_subscribe", ["logs", f]) as string,
      ]);
    }
    await increment(A0);
    await increment(A1);
    await increment(A0);
    const expectCounts = [2, 1, 3];
    for (let s = 0; s < subs.length; s++) {
      for (let i = 0; i < expectCounts[s]; i++) {
        assert.deepEqual(await ws.next(subs[s][0]), await anvilWs.next(subs[s][1]));
      }
    }
    // nothing more arrived for the narrow filters: a fourth increment from A1 comes next for byA1
    await increment(A1);
    const next = await ws.next(subs[1][0]) as { topics: string[] };
    assert.equal(next.topics[1], pad(A1 as `0x${string}`));
    assert.equal(ws.queued(subs[0][0]).length, 0);
    // a bad filter is invalid params, as a single answer
    const bad = await ws.call("eth_subscribe", ["logs", { address: "0x12" }]);
    assert.equal((bad.error as { code: number }).code, -32602);
    const unknown = await ws.call("eth_subscribe", ["syncingX"]);
    assert.equal((unknown.error as { code: number }).code, -32602);
  } finally {
    await ws.close();
    await anvilWs.close();
  }
});

Deno.test("a reorg replays from the fork point: dropped logs come back removed, new heads follow", async () => {
  const ws = await WsRpc.connect(http.wsAddress!);
  try {
    const heads = await ws.request("eth_subscribe", ["newHeads"]) as string;
    const logs = await ws.request("eth_subscribe", ["logs", { address: counter }]) as string;
    const fork = await node("eth_getBlockByNumber", ["latest", false]);
    const snapshot = await node("evm_snapshot");
    await increment(A0); // fork+1, with a log
    await node("evm_mine"); // fork+2
    const old1 = await ws.next(heads) as { hash: string; number: string };
    const old2 = await ws.next(heads) as { hash: string };
    const oldLog = await ws.next(logs) as Record<string, unknown>;
    assert.equal(old1.number, "0x" + (Number(fork.number) + 1).toString(16));
    assert.equal(await node("evm_revert", [snapshot]), true);
    await increment(A1); // fork+1', another log
    await node("evm_mine"); // fork+2'
    await node("evm_mine"); // fork+3'
    const canonical = [] as { hash: string; parentHash: string }[];
    for (let n = 1; n <= 3; n++) {
      canonical.push(
        await node("eth_getBlockByNumber", ["0x" + (Number(fork.number) + n).toString(16), false]),
      );
    }
    assert.notEqual(canonical[0].hash, old1.hash);
    assert.notEqual(canonical[1].hash, old2.hash);
    // the new chain, from the fork point, each block once
    for (const block of canonical) assert.deepEqual(await ws.next(heads), block);
    assert.equal(canonical[0].parentHash, fork.hash);
    // the dropped log again with removed: true, then the new chain's log
    assert.deepEqual(await ws.next(logs), { ...oldLog, removed: true });
    const newLog = await ws.next(logs) as { blockHash: string; topics: string[] };
    assert.equal(newLog.blockHash, canonical[0].hash);
    assert.equal(newLog.topics[1], pad(A1 as `0x${string}`));
    assert.equal(ws.queued(heads).length, 0);
  } finally {
    await ws.close();
  }
});

Deno.test("IPC is a stream: newHeads and newPendingTransactions are pushed on the socket", async () => {
  const c = await IpcRpc.connect(ipc.address);
  try {
    const heads = await c.request("eth_subscribe", ["newHeads"]) as string;
    const pending = await c.request("eth_subscribe", ["newPendingTransactions"]) as string;
    const hash = await node("eth_sendTransaction", [{ from: A0, to: A1, value: "0x1" }]);
    assert.equal(await c.next(pending), hash);
    const block = await c.next(heads) as { transactions: string[] };
    assert.deepEqual(block.transactions, [hash]);
    // in a batch too
    const batch = await c.raw([
      { jsonrpc: "2.0", id: 1, method: "eth_unsubscribe", params: [pending] },
      { jsonrpc: "2.0", id: 2, method: "eth_chainId" },
    ], "batch");
    assert.deepEqual(batch, [
      { jsonrpc: "2.0", id: 1, result: true },
      { jsonrpc: "2.0", id: 2, result: "0x7a69" },
    ]);
  } finally {
    await c.close();
  }
});

Deno.test("subscriptions end with their connection: no state is held for a closed one", async () => {
  const base = { sessions: http.hub.sessions, subs: http.hub.subscriptions };
  assert.equal(base.subs, 0);
  const ws = await WsRpc.connect(http.wsAddress!);
  const c = await IpcRpc.connect(ipc.address);
  for (const kind of ["newHeads", "logs", "newPendingTransactions"]) {
    await ws.request("eth_subscribe", [kind]);
    await c.request("eth_subscribe", [kind]);
  }
  assert.equal(http.hub.subscriptions, 3);
  assert.equal(ipc.hub.subscriptions, 3);
  assert.equal(http.hub.pollerListeners, 3);
  await ws.close();
  await c.close();
  await waitFor(
    "sessions released",
    () => http.hub.sessions === 0 && ipc.hub.sessions === 0,
    10_000,
    5,
  );
  assert.equal(http.hub.subscriptions, 0);
  assert.equal(ipc.hub.subscriptions, 0);
  assert.equal(http.hub.pollerListeners, 0);
  assert.equal(ipc.hub.pollerListeners, 0);
});

Deno.test("IPC backpressure: a client that sends without reading makes the bridge stop reading", async () => {
  const upstream = connectUpstream(anvil.url);
  const dispatcher = new Dispatcher({ upstream, chainId: 31337n, clientVersion: "t" });
  const BOUND = 256 * 1024;
  const pauses: number[] = [];
  let paused!: () => void;
  const firstPause = new Promise<void>((r) => paused = r);
  const server = await serveIpc({
    dispatcher,
    maxUnsentBytes: BOUND,
    onPause: ({ unsentBytes }) => {
      pauses.push(unsentBytes);
      paused();
    },
  });
  const conn = await Deno.connect({ transport: "unix", path: server.path });
  try {
    // 20,000 requests whose answers are ~1 KB each (the id comes back): 20 MB of answers.
    const id = "x".repeat(1000);
    const N = 20_000;
    const line = new TextEncoder().encode(
      JSON.stringify({ jsonrpc: "2.0", id, method: "eth_chainId" }) + "\n",
    );
    const writer = (async () => {
      const chunk = new Uint8Array(line.length * 100);
      for (let i = 0; i < 100; i++) chunk.set(line, i * line.length);
      for (let i = 0; i < N / 100; i++) {
        let o = 0;
        while (o < chunk.length) o += await conn.write(chunk.subarray(o));
      }
    })();
    await firstPause;
    // now read everything: every answer arrives, and the writer can finish
    let answers = 0;
    let tail = "";
    const buf = new Uint8Array(1 << 20);
    const dec = new TextDecoder();
    while (answers < N) {
      const n = await conn.read(buf);
      if (n === null) break;
      const text = tail + dec.decode(buf.subarray(0, n), { stream: true });
      const lines = text.split("\n");
      tail = lines.pop()!;
      answers += lines.length;
    }
    await writer;
    assert.equal(answers, N);
    // Reading stopped each time the unsent answers passed the bound; they never grew past it
    // by more than the answers to one read (256 KiB of requests -> at most ~260 answers).
    assert.ok(pauses.length > 0);
    const oneRead = 260 * (line.length + 64);
    assert.ok(Math.max(...pauses) <= BOUND + oneRead, `max unsent ${Math.max(...pauses)}`);
  } finally {
    conn.close();
    await server.close();
    upstream.close();
  }
});

/**
 * A WebSocket server on the bridge's handlers that drops a client over 256 KiB
 * unsent (with a subscription hub when `withHub`), and the reason it gave.
 */
async function slowClientServer(withHub: boolean) {
  const upstream = connectUpstream(anvil.url);
  const dispatcher = new Dispatcher({ upstream, chainId: 31337n, clientVersion: "t" });
  const hub = withHub ? new SubscriptionHub(upstream) : undefined;
  let dropped!: (reason: string) => void;
  const droppedReason = new Promise<string>((r) => dropped = r);
  const handler = createHttpHandler({
    dispatcher,
    paths: ["/t"],
    upgrade: createWebSocketHandler({
      dispatcher,
      hub,
      maxUnsentBytes: 256 * 1024,
      onDropped: (reason) => dropped(reason),
    }),
  });
  const server = await serveHttp(handler, { hostname: "127.0.0.1", port: 0 });
  return {
    hub,
    droppedReason,
    url: `ws://127.0.0.1:${server.port}/t`,
    async close() {
      hub?.close();
      await server.close();
      upstream.close();
    },
  };
}

Deno.test("WebSocket backpressure: a client that never reads is dropped with close code 1008 and a reason", async () => {
  const { hub: maybeHub, droppedReason, url, close } = await slowClientServer(true);
  const hub = maybeHub!;
  const h = await rawHandshake(url);
  try {
    assert.equal(h.status, 101);
    await sendText(h.conn, [
      JSON.stringify({ jsonrpc: "2.0", id: 0, method: "eth_subscribe", params: ["newHeads"] }),
    ]);
    await waitFor("subscribed", () => hub.subscriptions === 1, 10_000, 5);
    const id = "x".repeat(1000);
    const request = JSON.stringify({ jsonrpc: "2.0", id, method: "eth_chainId" });
    // keep sending (never reading) until the bridge gives up on this client
    let gaveUp = false;
    droppedReason.then(() => gaveUp = true);
    for (let i = 0; i < 200 && !gaveUp; i++) {
      await sendText(h.conn, Array(100).fill(request)).catch(() => gaveUp = true);
    }
    const reason = await droppedReason;
    assert.match(reason, /client too slow/);
    const end = await readUntilClose(h.conn, h.rest);
    assert.equal(end.closeCode, 1008);
    assert.match(end.closeReason ?? "", /client too slow: over 262144 bytes/);
    // the dropped connection's subscription is gone
    await waitFor("session released", () => hub.sessions === 0, 10_000, 5);
    assert.equal(hub.subscriptions, 0);
  } finally {
    h.conn.close();
    await close();
  }
});

Deno.test("WebSocket backpressure: a dropped client that keeps sending is closed, not read for ever", async () => {
  const { droppedReason, url, close } = await slowClientServer(false);
  const h = await rawHandshake(url);
  try {
    assert.equal(h.status, 101);
    const request = JSON.stringify({ jsonrpc: "2.0", id: "x".repeat(1000), method: "eth_chainId" });
    const batch = Array(100).fill(request);
    let gaveUp = false;
    droppedReason.then(() => gaveUp = true);
    for (let i = 0; i < 2000 && !gaveUp; i++) await sendText(h.conn, batch);
    assert.match(await droppedReason, /client too slow/);
    // keep sending after the drop (up to 64 MiB): the bridge stops waiting for this client
    // to go quiet and closes the socket, so a write fails before the 64 MiB are through
    let written = 0;
    let failed = false;
    try {
      while (written < 64 * 1024 * 1024) {
        await sendText(h.conn, batch);
        written += 100 * request.length;
      }
    } catch {
      failed = true;
    }
    assert.ok(failed, `the bridge read ${written} bytes after the drop and kept the socket open`);
  } finally {
    h.conn.close();
    await close();
  }
});

Deno.test("a node with a push channel (ws:// or IPC) serves subscriptions itself: passed through", async () => {
  const dir = await Deno.makeTempDir();
  const nodeIpc = `${dir}/anvil.ipc`;
  const pushNode = await startAnvil(["--ipc", nodeIpc]);
  await waitFor("anvil's IPC socket", () => Deno.lstat(nodeIpc).catch(() => undefined), 5_000);
  const mine = () =>
    fetch(pushNode.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"jsonrpc":"2.0","id":1,"method":"evm_mine"}',
    }).then((r) => r.text());
  try {
    for (const rpcUrl of [`ws://127.0.0.1:${pushNode.port}`, nodeIpc]) {
      const bridge = await startBridge({
        upstream: connectUpstream(rpcUrl),
        chainId: 31337n,
        clientVersion: "test",
        transport: "http",
        subscriptionPollMs: 3_600_000, // polling would never deliver within the test
      });
      const ws = await WsRpc.connect(bridge.wsAddress!);
      const direct = await WsRpc.connect(`ws://127.0.0.1:${pushNode.port}`);
      try {
        // reads and batches go to the node too
        assert.equal(await ws.request("eth_chainId"), "0x7a69");
        const batch = await ws.raw([
          { jsonrpc: "2.0", id: "a", method: "eth_blockNumber" },
          { jsonrpc: "2.0", id: "b", method: "eth_getBalance", params: [A0, "latest"] },
        ], "batch") as { id: string }[];
        assert.deepEqual(batch.map((x) => x.id), ["a", "b"]);
        const ours = await ws.request("eth_subscribe", ["newHeads"]) as string;
        const theirs = await direct.request("eth_subscribe", ["newHeads"]) as string;
        assert.equal(bridge.hub.nodeSubscriptions, 1, rpcUrl);
        assert.equal(bridge.hub.pollerListeners, 0, "nothing polls");
        await mine();
        assert.deepEqual(await ws.next(ours), await direct.next(theirs));
        // the node's own errors come back as the node gave them
        const bad = await ws.call("eth_subscribe", ["noSuchKind"]);
        assert.ok((bad.error as { code: number }).code < 0);
        await ws.close();
        await waitFor("session released", () => bridge.hub.sessions === 0, 10_000, 5);
        assert.equal(bridge.hub.nodeSubscriptions, 0, "unsubscribed on the node");
      } finally {
        await ws.close();
        await direct.close();
        await bridge.close();
      }
    }
  } finally {
    await pushNode.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("an IPC subscriber that does not read its notifications is dropped, its subscription ended", async () => {
  const upstream = connectUpstream(anvil.url);
  const dispatcher = new Dispatcher({ upstream, chainId: 31337n, clientVersion: "t" });
  const hub = new SubscriptionHub(upstream, { pollIntervalMs: 20 });
  let dropped!: (reason: string) => void;
  const droppedReason = new Promise<string>((r) => dropped = r);
  const server = await serveIpc({
    dispatcher,
    hub,
    maxUnsentBytes: 16 * 1024,
    onDropped: (reason) => dropped(reason),
  });
  const c = await IpcClient.connect(server.path);
  try {
    await c.write('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
    assert.match((await c.readLine())!, /"result":"0x[0-9a-f]{32}"/);
    assert.equal(hub.subscriptions, 1);
    // From here on the client never reads: the notifications of many blocks (~1.6 KB each)
    // fill the socket and then the bridge's bound.
    let gaveUp = false;
    droppedReason.then(() => gaveUp = true);
    for (let i = 0; i < 50 && !gaveUp; i++) {
      await node("anvil_mine", ["0x40"]);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(gaveUp, "the bridge kept buffering for a subscriber that does not read");
    assert.match(await droppedReason, /client too slow: over 16384 bytes/);
    await waitFor("session released", () => hub.sessions === 0, 10_000, 5);
    assert.equal(hub.subscriptions, 0);
    assert.equal(hub.pollerListeners, 0);
    // the bridge closed the socket: reading ends after what was already sent
    const buf = new Uint8Array(1 << 20);
    while ((await c.conn.read(buf)) !== null) { /* drain */ }
  } finally {
    c.close();
    await server.close();
    hub.close();
    upstream.close();
  }
});
