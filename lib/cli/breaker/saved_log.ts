/**
 * `breaker simulate --webhookId W --save FILE`: the log read from the
 * platform, written as it is replayed, in the input format of
 * `breaker simulate` (breaker.md §4), so that `breaker simulate FILE`
 * replays it offline to the same result: line N of the file is the record
 * the replay numbered N.
 *
 * The lines go to a temporary file beside FILE, renamed onto it only when
 * the read is complete: a read that fails or is stopped leaves no
 * half-written log (and an earlier FILE as it was).
 *
 * @module
 */

import type { LogRecord } from "../../webhooks/mod.ts";
import { CliError } from "../errors.ts";

/** A delivery log being written; see the module doc. */
export class SavedLog {
  readonly #path: string;
  readonly #tmp: string;
  readonly #file: Deno.FsFile;
  readonly #enc = new TextEncoder();
  #buf = "";
  #pending: Promise<void> = Promise.resolve();
  #failed: Error | null = null;

  private constructor(path: string, tmp: string, file: Deno.FsFile) {
    this.#path = path;
    this.#tmp = tmp;
    this.#file = file;
  }

  /** Opens the temporary file beside `path`; throws a {@linkcode CliError} naming it. */
  static async create(path: string): Promise<SavedLog> {
    const tmp = `${path}.tmp-${crypto.randomUUID().slice(0, 8)}`;
    try {
      const file = await Deno.open(tmp, { write: true, createNew: true });
      return new SavedLog(path, tmp, file);
    } catch (e) {
      throw new CliError(`Cannot write the log to "${path}": ${(e as Error).message}.`);
    }
  }

  /** Adds one record as an NDJSON line (written in chunks of 64 KiB). */
  add(r: LogRecord): void {
    const o: Record<string, unknown> = { webhookId: r.webhookId };
    if (r.notificationId !== undefined) o.notificationId = r.notificationId;
    if (r.kind === "enable") {
      o.sentTime = r.time;
      o.action = "enable";
    } else {
      o.sentTime = r.time;
      if (r.duration !== undefined) o.duration = r.duration;
      if (r.responseCode !== undefined) o.responseCode = r.responseCode;
      else o.failureReason = r.failureReason;
    }
    this.#buf += JSON.stringify(o) + "\n";
    if (this.#buf.length >= 65536) this.#flush();
  }

  #flush(): void {
    const bytes = this.#enc.encode(this.#buf);
    this.#buf = "";
    this.#pending = this.#pending.then(async () => {
      if (this.#failed) return;
      try {
        let off = 0;
        while (off < bytes.length) off += await this.#file.write(bytes.subarray(off));
      } catch (e) {
        this.#failed = e as Error;
      }
    });
  }

  /** Writes what is left and puts the file in place. */
  async commit(): Promise<void> {
    this.#flush();
    await this.#pending;
    this.#file.close();
    try {
      if (this.#failed) throw this.#failed;
      await Deno.rename(this.#tmp, this.#path);
    } catch (e) {
      await Deno.remove(this.#tmp).catch(() => {});
      throw new CliError(`Cannot write the log to "${this.#path}": ${(e as Error).message}.`);
    }
  }

  /** Drops the temporary file (after a failed read). */
  async abort(): Promise<void> {
    await this.#pending;
    try {
      this.#file.close();
    } catch {
      // already closed by commit
    }
    await Deno.remove(this.#tmp).catch(() => {});
  }
}
