/**
 * Gzip by its bytes: a delivery log (a file or standard input) that starts
 * with the gzip magic bytes is gunzipped (zlib, member after member, as
 * `zcat` does), whatever it is called; any other input passes through
 * untouched.
 *
 * @module
 */

import { concatBytes } from "../../core/mod.ts";
import { DeliveryLogError } from "./delivery_log_error.ts";

/** Compressed bytes given to zlib at a time: 16 KiB. */
const FEED_BYTES = 16 * 1024;

/** zlib's messages for a member header it cannot read (what follows a complete member). */
const HEADER_ERRORS = /incorrect header check|unknown compression method|invalid window size/;

/**
 * Gunzips `first` then the rest of `it`, member after member: a file made
 * with `cat a.gz b.gz` (log rotation, many exporters) decompresses to the
 * concatenation, as `zcat` reads it; zero bytes after the last member (block
 * padding) are ignored, as `gzip -d` does. Bytes after a complete member
 * that are neither another member nor zeros ("trailing garbage") are
 * REFUSED, unlike `gzip -d` (which warns and exits 2): a replay of a log
 * damaged at its end would report wrong suspensions without a word, so the
 * reader says so instead and the message gives `zcat FILE |` as the way to
 * ignore them knowingly. Each input chunk is decompressed before the next is
 * read (memory stays bounded).
 */
async function* gunzipMembers(
  first: Uint8Array,
  it: AsyncIterator<Uint8Array>,
): AsyncGenerator<Uint8Array> {
  const { createGunzip } = await import("node:zlib");
  const z = createGunzip();
  const out: Uint8Array[] = [];
  let failed: { error: unknown } | undefined;
  let ended = false;
  let produced = 0;
  let wake: (() => void) | undefined;
  const signal = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  z.on("data", (c: Uint8Array) => {
    produced += c.length;
    out.push(new Uint8Array(c.buffer, c.byteOffset, c.byteLength));
  });
  z.on("error", (error: unknown) => {
    failed = { error };
    signal();
  });
  z.on("end", () => {
    ended = true;
    signal();
  });
  /** Writes one chunk and waits until zlib has consumed it (or failed). */
  const feed = (chunk: Uint8Array) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      z.write(chunk.slice(), () => signal());
    });
  // a first member whose header zlib accepts (deflate, no reserved flag): a header error can
  // then only come from what follows a complete member
  const firstHeaderOk = first.length >= 4 && first[2] === 8 && (first[3] & 0xe0) === 0;
  const fail = (error: unknown): never => {
    const said = error instanceof Error ? error.message : String(error);
    if ((firstHeaderOk || produced > 0) && HEADER_ERRORS.test(said)) {
      throw new DeliveryLogError(
        "gzip-trailing-data",
        `The gzip data is followed by bytes that are neither gzip nor zero padding (${said}).`,
        { cause: error },
      );
    }
    throw new DeliveryLogError(
      "corrupt-gzip",
      `The input starts like gzip but does not decompress (${said}).`,
      { cause: error },
    );
  };
  try {
    let chunk: Uint8Array | undefined = first;
    while (chunk !== undefined) {
      // small pieces: deflate expands at most ~1,032 times, so one piece makes at most
      // ~16 MiB (a gzip bomb is read a piece at a time, and the line limit stops it)
      for (let at = 0; at < chunk.length; at += FEED_BYTES) {
        await feed(chunk.subarray(at, at + FEED_BYTES));
        if (failed) fail(failed.error);
        yield* out.splice(0);
      }
      const n = await it.next(); // an error of the source propagates as it is
      chunk = n.done ? undefined : n.value;
    }
    const done = new Promise<void>((resolve) => {
      wake = resolve;
    });
    z.end();
    if (!ended && !failed) await done;
    if (failed) fail(failed.error);
    yield* out.splice(0);
  } finally {
    z.destroy();
  }
}

/**
 * The byte chunks of `source`, gunzipped when its first (non-empty) chunk
 * starts with the gzip magic bytes; multi-member gzip decompresses to the
 * concatenation of its members. The source may reuse one buffer for its
 * chunks (each valid until the next is asked for): what the decompressor
 * holds on to is copied. Throws {@linkcode DeliveryLogError} `corrupt-gzip`
 * when gzip data does not decompress (`details`: what the decompressor
 * said) and `gzip-trailing-data` when complete gzip data is followed by
 * bytes that are not gzip (see `gunzipMembers` for why they are refused);
 * an error of the source itself propagates as it is.
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
  // at least 4 bytes (magic, method, flags) before deciding, whatever the chunk sizes
  let firstChunk: Uint8Array = new Uint8Array(0);
  while (firstChunk.length < 4) {
    const n = await it.next();
    if (n.done) break;
    if (n.value.length > 0) firstChunk = concatBytes([firstChunk, n.value]);
  }
  if (firstChunk.length === 0) return;
  if (firstChunk[0] === 0x1f && firstChunk[1] === 0x8b) { // the gzip magic bytes
    try {
      yield* gunzipMembers(firstChunk, it);
    } finally {
      await it.return?.();
    }
    return;
  }
  yield firstChunk; // a copy: safe even if the source reuses its buffer
  for (;;) {
    const n = await it.next();
    if (n.done) return;
    yield n.value;
  }
}
