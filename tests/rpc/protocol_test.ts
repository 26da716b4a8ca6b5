import assert from "node:assert/strict";
import { parseMessage, RpcError } from "../../lib/rpc/protocol.ts";

Deno.test("an empty batch is an invalid request (-32600)", () => {
  const m = parseMessage("[]");
  assert.deepEqual(m.kind, "error");
  if (m.kind === "error") assert.deepEqual(m.error.code, -32600);
});

Deno.test("text that is not JSON is a parse error (-32700)", () => {
  const m = parseMessage("{nope");
  assert.deepEqual(m.kind === "error" && m.error.code, -32700);
});

Deno.test("batch elements are validated one by one and keep their ids", () => {
  const m = parseMessage(
    '[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"1.0","id":"b","method":"x"},5]',
  );
  if (m.kind !== "batch") throw new Error("expected a batch");
  assert.deepEqual(m.items.length, 3);
  assert.deepEqual((m.items[0].request as { method: string }).method, "a");
  assert.ok(m.items[1].request instanceof RpcError);
  assert.deepEqual(m.items[1].id, "b");
  assert.deepEqual((m.items[2].request as RpcError).code, -32600);
});

Deno.test("a request without method or with a bad id is invalid", () => {
  for (const t of ['{"jsonrpc":"2.0","id":1}', '{"jsonrpc":"2.0","id":{},"method":"m"}']) {
    const m = parseMessage(t);
    assert.deepEqual(m.kind === "single" && (m.request as RpcError).code, -32600);
  }
});
