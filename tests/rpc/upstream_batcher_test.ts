/**
 * Batch-when-busy (`lib/rpc/upstream_batcher.ts`) against real HTTP nodes:
 * anvil (every caller gets its own answer under its own id when requests are
 * batched), and a local node that holds one method's answer (requests that
 * queue behind a slow one leave as one batch after the wait bound, without
 * waiting for it).
 */
import assert from "node:assert/strict";
import { UpstreamBatcher } from "../../lib/rpc/upstream_batcher.ts";
import { UpstreamClient } from "../../lib/rpc/upstream.ts";
import type { RpcRequest } from "../../lib/rpc/protocol.ts";
import { startAnvil } from "../support/tools.ts";

const request = (id: string | number, method: string, params: unknown[] = []): RpcRequest =>
  ({ jsonrpc: "2.0", id, method, params }) as RpcRequest;

Deno.test("requests sent together to anvil each get their own answer, under their own id", async () => {
  const anvil = await startAnvil(["--chain-id", "4242"]);
  const node = new UpstreamClient(anvil.url);
  try {
    const batcher = new UpstreamBatcher(node);
    const ids = ["a", 7, "x-1", 1.5, "zz", 0];
    const answers = await Promise.all(
      ids.map((id, i) =>
        batcher.send(request(id, i % 2 ? "eth_chainId" : "net_version")).then((t) => JSON.parse(t))
      ),
    );
    for (const [i, a] of answers.entries()) {
      assert.deepEqual(a.id, ids[i]);
      assert.equal(a.result, i % 2 ? "0x1092" : "4242");
    }
  } finally {
    node.close();
    await anvil.stop();
  }
});

Deno.test("requests queued behind a slow one leave as one batch after the wait bound, not after it", async () => {
  const bodies: unknown[] = [];
  let releaseSlow!: () => void;
  const slowHeld = new Promise<void>((r) => releaseSlow = r);
  const answer = (m: { id: unknown; method: string }) => ({
    jsonrpc: "2.0",
    id: m.id,
    result: m.method,
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.json();
    bodies.push(body);
    if (!Array.isArray(body) && body.method === "slow") await slowHeld;
    return Response.json(Array.isArray(body) ? body.map(answer) : answer(body));
  });
  const node = new UpstreamClient(`http://127.0.0.1:${server.addr.port}`);
  try {
    const batcher = new UpstreamBatcher(node, { maxInFlight: 1, maxWaitMs: 20 });
    const order: string[] = [];
    const slow = batcher.send(request(1, "slow")).then((t) => (order.push("slow"), t));
    const quick = ["q1", "q2", "q3"].map((m, i) =>
      batcher.send(request(10 + i, m)).then((t) => (order.push(m), JSON.parse(t)))
    );
    // resolves while "slow" is still held (bounded, so a batcher that waits for it fails here)
    let timer: ReturnType<typeof setTimeout> | undefined;
    const quickAnswers = await Promise.race([
      Promise.all(quick),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error("the quick requests waited for the slow one")),
          5000,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    assert.deepEqual(order, ["q1", "q2", "q3"]);
    assert.deepEqual(quickAnswers.map((a) => [a.id, a.result]), [[10, "q1"], [11, "q2"], [
      12,
      "q3",
    ]]);
    assert.equal(bodies.length, 2);
    assert.ok(Array.isArray(bodies[1]), "the three waited and left as one batch");
    assert.equal((bodies[1] as unknown[]).length, 3);
    releaseSlow();
    assert.equal(JSON.parse(await slow).result, "slow");
  } finally {
    releaseSlow();
    node.close();
    await server.shutdown();
  }
});
