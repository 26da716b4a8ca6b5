import assert from "node:assert/strict";
import {
  answerFrom,
  answerText,
  classify,
  DEFAULT_MAX_BATCH,
  RpcError,
  upstreamText,
  validateRequest,
} from "../../lib/rpc/protocol.ts";

Deno.test("an empty batch is an invalid request (-32600)", () => {
  const m = classify([]);
  assert.deepEqual(m.kind, "error");
  if (m.kind === "error") assert.deepEqual(m.error.code, -32600);
});

Deno.test("batch elements are validated one by one and keep their ids", () => {
  const m = classify(
    JSON.parse('[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"1.0","id":"b","method":"x"},5]'),
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
    const m = classify(JSON.parse(t));
    assert.deepEqual(m.kind === "single" && (m.request as RpcError).code, -32600);
  }
});

Deno.test("the node's answer gets the caller's id whatever its layout; a body that is not an answer is an error", () => {
  const usual = answerText('{"jsonrpc":"2.0","id":1,"result":{"id":1,"a":[1]}}', 1, 1.5);
  assert.equal(usual, '{"jsonrpc":"2.0","id":1.5,"result":{"id":1,"a":[1]}}');
  // other layouts (id last, spaces, a newline at the end) are decoded and rebuilt
  for (
    const t of [
      '{"jsonrpc":"2.0","result":"0x1","id":1}\n',
      '{ "jsonrpc": "2.0", "id": 1, "result": "0x1" }',
      '{"id":1,"jsonrpc":"2.0","result":"0x1","extra":true}',
    ]
  ) {
    assert.deepEqual(JSON.parse(answerText(t, 1, "a")), { jsonrpc: "2.0", id: "a", result: "0x1" });
  }
  const err = JSON.parse(
    answerText(
      '{"jsonrpc":"2.0","error":{"code":3,"message":"reverted","data":"0x"},"id":1}',
      1,
      9,
    ),
  );
  assert.deepEqual(err, {
    jsonrpc: "2.0",
    id: 9,
    error: { code: 3, message: "reverted", data: "0x" },
  });
  // the usual prefix but a wrong id is not taken as the answer's: rebuilt from the decoded body
  assert.deepEqual(JSON.parse(answerText('{"jsonrpc":"2.0","id":2,"result":5}', 1, 9)).result, 5);
  assert.equal(JSON.parse(answerText("<html>", 1, 9)).error.code, -32002);
  assert.equal(JSON.parse(answerText('{"jsonrpc":"2.0","id":1}', 1, 9)).error.code, -32603);
  assert.equal(answerFrom([1], null).id, null);
  assert.ok("error" in answerFrom("x", 4));
});

Deno.test("the request sent upstream is the envelope only, with the bridge's id", () => {
  const r = validateRequest({ jsonrpc: "2.0", id: 1.5, method: "m", params: [1], extra: 2 });
  if (r instanceof RpcError) throw r;
  assert.equal(upstreamText(r, 1), '{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}');
  assert.equal(upstreamText({ jsonrpc: "2.0", method: "n" }), '{"jsonrpc":"2.0","method":"n"}');
});

Deno.test("a batch longer than the limit is one -32600 error; the default limit is geth's 1,000", () => {
  assert.equal(DEFAULT_MAX_BATCH, 1000);
  const item = '{"jsonrpc":"2.0","id":1,"method":"a"}';
  const over = classify(JSON.parse(`[${item},${item},${item}]`), 2);
  assert.equal(over.kind, "error");
  if (over.kind === "error") {
    assert.equal(over.error.code, -32600);
    assert.match(over.error.message, /3 requests; the limit is 2/);
  }
  assert.equal(classify(JSON.parse(`[${item},${item}]`), 2).kind, "batch");
  assert.equal(
    classify(new Array(1001).fill({ jsonrpc: "2.0", id: 1, method: "a" })).kind,
    "error",
  );
});
