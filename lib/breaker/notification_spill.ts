/**
 * Where `breaker simulate --notifications` puts the notification lines of
 * notifications that reached their final status while the log is replayed,
 * until the output reaches them (after the events): a private temporary
 * file (mode 0600, removed from its directory as soon as it is open, so
 * that no exit path — an error, Ctrl-C, a kill — leaves it behind), so that
 * memory does not grow with the log. Entries are `LINE<TAB>JSON` lines, in
 * the order they were added.
 *
 * @module
 */

import { BreakerError } from "./errors.ts";

const enc = new TextEncoder();

/**
 * An append-only spill file of `LINE<TAB>JSON` entries, read back once.
 *
 * @example
 * ```ts
 * const spill = await NotificationSpill.create();
 * spill.add(3, '{"type":"notification"}');
 * for await (const [line, json] of spill.entries()) console.log(line, json);
 * spill.close();
 * ```
 */
export class NotificationSpill {
  readonly #file: Deno.FsFile;
  /** The path, while it still exists (a system that cannot remove an open file). */
  #path: string | null;
  // entries are encoded straight into one reused buffer (no string joined, no new array)
  readonly #buf = new Uint8Array(1 << 18);
  #used = 0;

  private constructor(file: Deno.FsFile, path: string | null) {
    this.#file = file;
    this.#path = path;
  }

  /**
   * A new, empty spill file in the system's temporary directory (`TMPDIR`);
   * throws a {@linkcode BreakerError} when it cannot be made.
   */
  static async create(): Promise<NotificationSpill> {
    let path: string;
    let file: Deno.FsFile;
    try {
      path = await Deno.makeTempFile({ prefix: "service-breaker-notifications-" });
      file = await Deno.open(path, { read: true, write: true });
    } catch (e) {
      throw new BreakerError(
        "file",
        `Cannot create a temporary file for --notifications: ${
          (e as Error).message
        }. Set TMPDIR to a writable directory.`,
        { cause: e },
      );
    }
    try {
      await Deno.remove(path); // gone from the directory; the open file lives on until closed
      return new NotificationSpill(file, null);
    } catch {
      return new NotificationSpill(file, path); // removed by close()
    }
  }

  /** Appends one entry: the input line and the JSON text of its notification line. */
  add(line: number, json: string): void {
    let text = `${line}\t${json}\n`;
    for (;;) {
      const r = enc.encodeInto(text, this.#buf.subarray(this.#used));
      this.#used += r.written;
      if (r.read === text.length) return;
      text = text.slice(r.read);
      this.#flush();
    }
  }

  #flush(): void {
    let off = 0;
    while (off < this.#used) off += this.#file.writeSync(this.#buf.subarray(off, this.#used));
    this.#used = 0;
  }

  /** The entries in the order they were added, as [line, JSON text]. */
  async *entries(): AsyncGenerator<[number, string]> {
    this.#flush();
    await this.#file.seek(0, Deno.SeekMode.Start);
    const dec = new TextDecoder();
    const buf = this.#buf; // not written to any more
    let carry = "";
    for (;;) {
      const n = this.#file.readSync(buf);
      if (n === null) break;
      const text = carry + dec.decode(buf.subarray(0, n), { stream: true });
      let start = 0;
      for (;;) {
        const nl = text.indexOf("\n", start);
        if (nl === -1) break;
        const tab = text.indexOf("\t", start);
        yield [Number(text.slice(start, tab)), text.slice(tab + 1, nl)];
        start = nl + 1;
      }
      carry = text.slice(start);
    }
  }

  /** Closes (and so deletes) the file. */
  close(): void {
    try {
      this.#file.close();
    } catch { /* closed already */ }
    if (this.#path !== null) {
      try {
        Deno.removeSync(this.#path);
      } catch { /* gone already */ }
      this.#path = null;
    }
  }
}
