/**
 * `breaker simulate --webhookId W --save FILE`: the log read from the
 * platform, written as it is replayed, in the input format of
 * `breaker simulate` (breaker.md §4), so that `breaker simulate FILE`
 * replays it offline to the same result: line N of the file is the record
 * the replay numbered N.
 *
 * The lines go to a temporary file beside FILE, renamed onto it only when
 * the read is complete: a read that fails or is stopped (the command
 * {@linkcode SavedLog.discard}s it from the SIGINT/SIGTERM/SIGHUP handler)
 * leaves no half-written log (and an earlier FILE as it was).
 *
 * @module
 */

import type { LogRecord } from "../webhooks/mod.ts";
import { BreakerError } from "./errors.ts";

const cannotWrite = (path: string, why: string) =>
  new BreakerError("file", `Cannot write the log to "${path}": ${why}.`);

/** A delivery log being written; see the module doc. */
export class SavedLog {
  readonly #path: string;
  readonly #tmp: string;
  readonly #file: Deno.FsFile;
  readonly #enc = new TextEncoder();
  #buf = "";
  #discarded = false;

  private constructor(path: string, tmp: string, file: Deno.FsFile) {
    this.#path = path;
    this.#tmp = tmp;
    this.#file = file;
  }

  /**
   * Opens the temporary file beside `path` (0600), before anything is read:
   * a `path` that is a directory or not a regular file, or a directory where
   * no file can be made, is a {@linkcode BreakerError} naming it now.
   */
  static async create(path: string): Promise<SavedLog> {
    try {
      const st = await Deno.stat(path);
      if (st.isDirectory) throw cannotWrite(path, "it is a directory; give a file name");
      if (!st.isFile) throw cannotWrite(path, "it is not a regular file");
    } catch (e) {
      if (e instanceof BreakerError) throw e;
      if (!(e instanceof Deno.errors.NotFound)) throw cannotWrite(path, (e as Error).message);
    }
    const tmp = `${path}.tmp-${crypto.randomUUID().slice(0, 8)}`;
    try {
      const file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
      return new SavedLog(path, tmp, file);
    } catch (e) {
      throw cannotWrite(path, (e as Error).message);
    }
  }

  /**
   * Drops the temporary file at once, synchronously (from a signal's
   * handler: the process may end before anything else runs); later writes
   * are ignored.
   */
  discard(): void {
    this.#discarded = true;
    try {
      this.#file.close();
    } catch { /* closed already */ }
    try {
      Deno.removeSync(this.#tmp);
    } catch { /* gone already */ }
  }

  /**
   * Adds one record as an NDJSON line (written in chunks of 64 KiB, with
   * synchronous writes, as the notification spill does: a write that fails
   * is a {@linkcode BreakerError} `file` at once).
   */
  add(r: LogRecord): void {
    const o: Record<string, unknown> = { webhookId: r.webhookId };
    if (r.notificationId !== undefined) o.notificationId = r.notificationId;
    o.sentTime = r.time;
    if (r.kind === "enable") o.action = "enable";
    else {
      if (r.duration !== undefined) o.duration = r.duration;
      if (r.responseCode !== undefined) o.responseCode = r.responseCode;
      else o.failureReason = r.failureReason;
    }
    this.#buf += JSON.stringify(o) + "\n";
    if (this.#buf.length >= 65536) this.#flush();
  }

  #flush(): void {
    if (this.#discarded) return;
    const bytes = this.#enc.encode(this.#buf);
    this.#buf = "";
    try {
      let off = 0;
      while (off < bytes.length) off += this.#file.writeSync(bytes.subarray(off));
    } catch (e) {
      throw cannotWrite(this.#path, (e as Error).message);
    }
  }

  /** Writes what is left and puts the file in place (else drops it). */
  async commit(): Promise<void> {
    try {
      this.#flush();
      this.#file.close();
      await Deno.rename(this.#tmp, this.#path);
    } catch (e) {
      this.discard();
      throw e instanceof BreakerError ? e : cannotWrite(this.#path, (e as Error).message);
    }
  }

  /** Drops the temporary file (after a failed read). */
  abort(): Promise<void> {
    this.discard();
    return Promise.resolve();
  }
}

/**
 * Writes `text` to `path` whole or not at all (beside it, then renamed): a
 * {@linkcode BreakerError} `file` naming `what` when it cannot.
 *
 * @example
 * ```ts
 * await writeWhole("breaker.svg", "the plot", "<svg/>");
 * ```
 */
export async function writeWhole(path: string, what: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${crypto.randomUUID().slice(0, 8)}`;
  try {
    await Deno.writeTextFile(tmp, text);
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw new BreakerError("file", `Cannot write ${what} to "${path}": ${(e as Error).message}.`);
  }
}
