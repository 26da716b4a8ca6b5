/**
 * What the user sees while a send waits for custody: a line on standard
 * error at a calm cadence (the first after {@linkcode FIRST_LINE_MS}, then
 * every {@linkcode LINE_EVERY_MS} and at each status change), naming the
 * platform transaction, its status in words (`waiting for approval`,
 * `signing`, `broadcasting`) and how long it has waited. When every client
 * that asked for the send has stopped waiting, it says that the transaction
 * goes on and how to pick the script up again; when such a send ends, its
 * hash (or its failure) is printed, since no client received it.
 *
 * A send that completes within the first seconds prints nothing. The lines
 * are plain text, one per event (never a rewritten line), so a log file or CI
 * output reads well; `--quiet` turns them off (`lib/cli/rpc.ts`).
 *
 * @module
 */

import { transactionStatusInWords } from "../core/mod.ts";

/** The first progress line comes after this long: 5 s. */
export const FIRST_LINE_MS = 5_000;
/** Then a line this often while nothing changes: 30 s. */
export const LINE_EVERY_MS = 30_000;

/** Options of {@linkcode SendProgress}. */
export interface SendProgressOptions {
  /** Writes one line (standard error). */
  write: (line: string) => void;
  /** Clock; default `Date.now`. */
  now?: () => number;
  /** What to run to go on after the client gave up (read when said); default a generic hint. */
  resumeHint?: () => string;
}

/** The default of {@linkcode SendProgressOptions.resumeHint}. */
export const DEFAULT_RESUME_HINT = "a repeat of the same request joins it";

/** Seconds, rounded, as `75 s`. */
function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}

/**
 * The progress of one send.
 *
 * @example
 * ```ts
 * const p = new SendProgress("nonce 0 from 0xf39F…2266", { write: console.error });
 * p.created("7c1e…");
 * p.status("PENDING_AUTHORIZATION"); // after 5 s: "platform transaction 7c1e… (nonce 0 …): waiting for approval, 5 s"
 * ```
 */
export class SendProgress {
  readonly #label: string;
  readonly #o: SendProgressOptions;
  readonly #now: () => number;
  readonly #start: number;
  #txId: string | undefined;
  #status = "";
  #lastLine: number | undefined;
  #abandoned = false;

  /** Starts the clock of a send described by `label` (e.g. `nonce 3 from 0x…`). */
  constructor(label: string, options: SendProgressOptions) {
    this.#label = label;
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#start = this.#now();
  }

  /** Whether every client stopped waiting (the outcome is then printed). */
  get abandoned(): boolean {
    return this.#abandoned;
  }

  /** The platform created the transaction `txId`. */
  created(txId: string): void {
    this.#txId = txId;
  }

  /** The transaction was seen in `status`: prints a line when one is due. */
  status(status: string): void {
    const now = this.#now();
    const changed = status !== this.#status;
    this.#status = status;
    const due = this.#lastLine === undefined
      ? now - this.#start >= FIRST_LINE_MS
      : changed || now - this.#lastLine >= LINE_EVERY_MS;
    if (due) this.#line(`${transactionStatusInWords(status)}, ${seconds(now - this.#start)}`);
  }

  /** Every client that asked for the send stopped waiting. */
  allGone(): void {
    if (this.#abandoned) return;
    this.#abandoned = true;
    const what = this.#status ? ` (${transactionStatusInWords(this.#status)})` : "";
    this.#line(
      `the client stopped waiting after ${
        seconds(this.#now() - this.#start)
      }; the transaction continues${what} and its hash will be printed here; ${
        this.#o.resumeHint?.() ?? DEFAULT_RESUME_HINT
      }.`,
    );
  }

  /** A repeated request joined the send. */
  joined(): void {
    if (this.#lastLine === undefined && !this.#abandoned) return; // a quick send: nothing to say
    this.#abandoned = false;
    this.#line(`a repeat of the request joined it after ${seconds(this.#now() - this.#start)}`);
  }

  /** The send ended with `hash`: printed when the wait was long enough to be reported. */
  finished(hash: string): void {
    if (this.#lastLine === undefined && !this.#abandoned) return;
    this.#line(
      `done after ${seconds(this.#now() - this.#start)}: ${hash}${
        this.#abandoned ? " (no client was waiting for it)" : ""
      }`,
    );
  }

  /**
   * The line for a send still under way when the bridge stops (its child
   * exited): the transaction goes on on the platform, and how to pick it up.
   */
  unfinished(): string {
    const what = this.#status ? transactionStatusInWords(this.#status) : "not created yet";
    const tx = this.#txId ? `platform transaction ${this.#txId}` : "send";
    return `${tx} (${this.#label}) is still ${what} after ${
      seconds(this.#now() - this.#start)
    } as the bridge stops: it continues on the platform; ${
      this.#o.resumeHint?.() ?? DEFAULT_RESUME_HINT
    }.`;
  }

  /** The send failed: printed when nobody is waiting to receive the error. */
  failed(message: string): void {
    if (!this.#abandoned) return;
    this.#line(`${message} (no client was waiting for it)`);
  }

  #line(text: string): void {
    this.#lastLine = this.#now();
    const tx = this.#txId ? `platform transaction ${this.#txId}` : "send";
    this.#o.write(`${tx} (${this.#label}): ${text}`);
  }
}
