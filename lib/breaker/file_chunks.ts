/**
 * The chunks of a file for `breaker simulate`, read into one reused 1 MiB
 * buffer with synchronous reads (the reader has nothing to do while it waits): each chunk is valid only until the next one
 * is asked for, which `readDeliveryLog` allows (it copies what it keeps).
 *
 * @module
 */

import { BreakerError } from "./errors.ts";

/**
 * Yields the bytes of `path` in chunks of `size` (the last may be shorter).
 *
 * @example
 * ```ts
 * for await (const chunk of fileChunks("log.ndjson")) console.log(chunk.length);
 * ```
 */
export async function* fileChunks(path: string, size = 1 << 20): AsyncGenerator<Uint8Array> {
  const file = await Deno.open(path, { read: true });
  try {
    const buf = new Uint8Array(size);
    if (!(await file.stat()).isFile) {
      // a FIFO or a device: asynchronous reads, so that a wait for a writer blocks nothing
      // (signals still stop the run)
      for (;;) {
        const r = await file.read(buf);
        if (r === null) return;
        yield buf.subarray(0, r);
      }
    }
    for (;;) {
      let n = 0;
      while (n < size) {
        // a synchronous read: an await per megabyte idled the reader (~15% of its time,
        // measured with --cpu-prof), and nothing else runs meanwhile
        const r = file.readSync(buf.subarray(n));
        if (r === null) break;
        n += r;
      }
      if (n === 0) return;
      yield n === size ? buf : buf.subarray(0, n);
      if (n < size) return;
    }
  } finally {
    file.close();
  }
}

/**
 * The chunks of the log file at `path` ({@linkcode fileChunks}), once it is
 * known to be there and readable: a directory, a missing file or one this
 * user cannot read is a {@linkcode BreakerError} `file` naming it.
 *
 * @example
 * ```ts
 * const chunks = await openLog("deliveries.ndjson");
 * ```
 */
export async function openLog(path: string): Promise<AsyncIterable<Uint8Array>> {
  const refuse = (why: string) => new BreakerError("file", `Cannot read "${path}": ${why}`);
  let st: Deno.FileInfo;
  try {
    st = await Deno.stat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw refuse("no such file. Check the path.");
    if (e instanceof Deno.errors.PermissionDenied) throw refuse("permission denied.");
    throw refuse(`${(e as Error).message}.`);
  }
  if (st.isDirectory) throw refuse("it is a directory. Give a log file.");
  return fileChunks(path);
}
