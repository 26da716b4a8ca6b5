/**
 * Gzip by its bytes: a delivery log (a file or standard input) that starts
 * with the gzip magic bytes is gunzipped with `DecompressionStream`,
 * whatever it is called; any other input passes through untouched.
 *
 * @module
 */

import { DeliveryLogError } from "./delivery_log_error.ts";

/**
 * True when `bytes` starts with the gzip magic bytes (1f 8b).
 *
 * @example
 * ```ts
 * isGzip(new Uint8Array([0x1f, 0x8b, 8])); // true
 * ```
 */
export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/**
 * The byte chunks of `source`, gunzipped when its first (non-empty) chunk
 * starts with the gzip magic bytes. The source may reuse one buffer for its
 * chunks (each valid until the next is asked for): what the decompressor
 * holds on to is copied. Throws {@linkcode DeliveryLogError} `corrupt-gzip`
 * when gzip data does not decompress (`details`: what the decompressor
 * said); an error of the source itself propagates as it is.
 *
 * @example
 * ```ts
 * const plain = new TextEncoder().encode('{"webhookId":"w1","sentTime":1,"responseCode":200}\n');
 * for await (const chunk of decompressIfGzip(ReadableStream.from([plain]))) chunk; // the same bytes
 * ```
 */
export async function* decompressIfGzip(
  source: AsyncIterable<Uint8Array>,
): AsyncGenerator<Uint8Array> {
  const it = source[Symbol.asyncIterator]();
  let head = await it.next();
  while (!head.done && head.value.length === 0) head = await it.next();
  if (head.done) return;
  const firstChunk = head.value;
  if (isGzip(firstChunk)) {
    let sourceError: { error: unknown } | undefined;
    const compressed = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(firstChunk.slice());
      },
      async pull(c) {
        let n;
        try {
          n = await it.next();
        } catch (error) {
          sourceError = { error };
          throw error;
        }
        if (n.done) c.close();
        else c.enqueue(n.value.slice());
      },
      async cancel() {
        await it.return?.();
      },
    });
    try {
      yield* compressed.pipeThrough(
        new DecompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>,
      );
    } catch (e) {
      if (sourceError?.error === e) throw e; // the source's own error, not the data's
      throw new DeliveryLogError(
        "corrupt-gzip",
        `The input starts like gzip but does not decompress (${
          e instanceof Error ? e.message : String(e)
        }).`,
        { cause: e },
      );
    }
    return;
  }
  yield firstChunk;
  for (;;) {
    const n = await it.next();
    if (n.done) return;
    yield n.value;
  }
}
