import assert from "node:assert/strict";
import { FramingError, JsonStreamDecoder } from "../../lib/rpc/json_stream.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function feed(d: JsonStreamDecoder, chunks: string[]): unknown[] {
  const out: unknown[] = [];
  for (const c of chunks) {
    for (const f of d.push(enc.encode(c))) out.push(JSON.parse(dec.decode(f)));
  }
  return out;
}

Deno.test("a message split at every byte is decoded once, whole", () => {
  const msg =
    '{"jsonrpc":"2.0","id":7,"method":"eth_call","params":[{"data":"0x{}[]\\"}"},"latest"]}';
  const d = new JsonStreamDecoder();
  const out = feed(d, [...msg]);
  assert.deepEqual(out, [JSON.parse(msg)]);
  assert.deepEqual(d.pending, false);
});

Deno.test("several messages in one read come out in order, with or without newlines", () => {
  const d = new JsonStreamDecoder();
  const out = feed(d, ['{"id":1}\n{"id":2}[{"id":3},{"id":4}]  \r\n\t{"id":5}']);
  assert.deepEqual(out, [{ id: 1 }, { id: 2 }, [{ id: 3 }, { id: 4 }], { id: 5 }]);
});

Deno.test("braces and escaped quotes inside strings do not end a message", () => {
  const d = new JsonStreamDecoder();
  const out = feed(d, ['{"a":"}}]]\\\\","b":"\\"{"}', '{"c":"\\\\\\""}']);
  assert.deepEqual(out, [{ a: "}}]]\\", b: '"{' }, { c: '\\"' }]);
});

Deno.test("a 5 MB message arriving in 64 KiB pieces is decoded", () => {
  const big = JSON.stringify({ id: 1, params: ["0x" + "ab".repeat(2_500_000)] });
  const bytes = enc.encode(big);
  const d = new JsonStreamDecoder();
  let frames: Uint8Array[] = [];
  for (let o = 0; o < bytes.length; o += 65536) {
    frames = frames.concat(d.push(bytes.slice(o, o + 65536)));
  }
  assert.deepEqual(frames.length, 1);
  assert.deepEqual(frames[0].length, bytes.length);
  assert.deepEqual(JSON.parse(dec.decode(frames[0])).params[0].length, 5_000_002);
});

Deno.test("garbage between messages is a framing error", () => {
  const d = new JsonStreamDecoder();
  assert.deepEqual(feed(d, ['{"id":1}']).length, 1);
  assert.throws(() => d.push(enc.encode("hello")), FramingError);
});

Deno.test("a message over the limit is a framing error, even before it ends", () => {
  const d = new JsonStreamDecoder({ maxFrameBytes: 1000 });
  assert.throws(() => d.push(enc.encode('{"a":"' + "x".repeat(2000))), FramingError);
});
