/**
 * The node stream (`--rpcUrl ws://…`): a node that accepts but never answers
 * yields an upstream error after the timeout instead of a request that waits
 * for ever, and a node that drops the connection fails what is in flight.
 * The "node" here is a WebSocket server in this process (a real socket).
 */
import assert from "node:assert/strict";
import { WsUpstreamClient } from "../../lib/rpc/node_stream.ts";
import { UpstreamError } from "../../lib/rpc/upstream.ts";

Deno.test("ws:// node: no answer becomes an UpstreamError after the timeout; a drop fails what is in flight", async () => {
  const sockets: WebSocket[] = [];
  let received!: () => void;
  const got = new Promise<void>((r) => received = r);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    sockets.push(socket);
    socket.onmessage = () => received(); // and never answers
    return response;
  });
  const node = new WsUpstreamClient(`ws://127.0.0.1:${server.addr.port}`);
  try {
    node.stream.timeoutMs = 200;
    await assert.rejects(
      node.send('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}'),
      (e) => e instanceof UpstreamError && /no answer from the node within 200 ms/.test(e.message),
    );
    node.stream.timeoutMs = 60_000;
    const pending = node.send('{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber"}');
    await got;
    for (const s of sockets) s.close();
    await assert.rejects(pending, (e) => e instanceof UpstreamError && /closed/.test(e.message));
  } finally {
    node.close();
    await server.shutdown();
  }
});

Deno.test("WS://… (any case) is a WebSocket node, not an IPC path", async () => {
  const { NodeStream } = await import("../../lib/rpc/node_stream.ts");
  const stream = new NodeStream("WS://127.0.0.1:1/key");
  assert.equal(stream.shownUrl, "ws://127.0.0.1:1/…");
  const client = new WsUpstreamClient("WS://127.0.0.1:1");
  try {
    // a WebSocket to a closed port, not a unix socket named "WS://127.0.0.1:1"
    await assert.rejects(client.request("eth_chainId"), (e) => {
      assert.ok(e instanceof UpstreamError);
      assert.doesNotMatch(String((e as Error).message), /No such file|os error 2\b/);
      return true;
    });
  } finally {
    client.close();
  }
});
