/**
 * The chunks of a file for `breaker simulate` (one thread or a `--jobs` worker), read
 * into one reused 1 MiB buffer with synchronous reads (the reader has nothing
 * to do while it waits): each chunk is valid only until the next one
 * is asked for, which `readDeliveryLog` allows (it copies what it keeps).
 *
 * @module
 */

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
        // a synchronous read: an await per megabyte left the thread idle ~15% of a
        // --jobs worker's time (measured with --cpu-prof), and nothing else runs meanwhile
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
