/**
 * What the user sees while a send waits for custody: a line on standard
 * error at a calm cadence (the first after {@linkcode FIRST_LINE_MS}, then
 * every {@linkcode LINE_EVERY_MS} and at each status change), naming the
 * platform transaction, its status in words (`waiting for approval`,
 * `signing`, `broadcasting`) and how long it has waited. When every client
 * that asked for the send has stopped waiting, it says that the transaction
 * goes on and what a repeat does in this mode ({@linkcode SendMode}: with a
 * nonce, or without and with or without joins); when such a send ends, its
 * hash (or its failure) is printed, since no client received it. That line
 * waits {@linkcode GONE_QUIET_MS}: a client that gives up and sends again at
 * once (forge after its 45 s timeout) is joined before anything is said, and
 * a bridge that stops with its child says it once, in
 * {@linkcode SendProgress.unfinished}. What to run to pick a script up again
 * is said once by the bridge when it stops (`custody.ts`), not here.
 *
 * A send that completes within the first seconds prints nothing. The lines
 * are plain text, one per event (never a rewritten line), so a log file or CI
 * output reads well; `--quiet` turns them off (`lib/cli/rpc.ts`).
 *
 * @module
 */

import { TRANSACTION_SENT_STATUSES, transactionStatusInWords } from "../core/mod.ts";

/** The first progress line comes after this long: 5 s. */
export const FIRST_LINE_MS = 5_000;
/** Then a line this often while nothing changes: 30 s. */
export const LINE_EVERY_MS = 30_000;

/** How long the line saying that every client left waits for a repeat that joins: 1.5 s. */
export const GONE_QUIET_MS = 1_500;

/** What is true of a send in this bridge's mode, for the lines to say only that. */
export interface SendMode {
  /** The caller gave a nonce (the send is a slot: a repeat joins it, through any bridge). */
  nonce: boolean;
  /** Without a nonce: a repeat after the client left joins it (`--joinRetries`, default on). */
  joins: boolean;
  /** The platform runs inside this process (`rpc --emulator`) and stops with the bridge. */
  platformInProcess: boolean;
}

/** Options of {@linkcode SendProgress}. */
export interface SendProgressOptions {
  /** Writes one line (standard error). */
  write: (line: string) => void;
  /** Clock; default `Date.now`. */
  now?: () => number;
  /** The mode; default a nonce send on a real platform. */
  mode?: SendMode;
  /** Schedules `f` after `ms` (returns a cancel); default an unref'd timer. */
  later?: (f: () => void, ms: number) => () => void;
}

function defaultLater(f: () => void, ms: number): () => void {
  const t = setTimeout(f, ms);
  Deno.unrefTimer(t);
  return () => clearTimeout(t);
}

/** What a repeat of a send does in `mode`, once its client left. */
export function repeatInWords(mode: SendMode): string {
  if (mode.nonce) {
    return mode.platformInProcess
      ? "the same request (same nonce, destination, value and data) joins it while this bridge runs"
      : "the same request (same nonce, destination, value and data) joins it, through this bridge or a new one";
  }
  return mode.joins
    ? "the same request sent again to this bridge joins it once (a new bridge cannot tell it from a new send: give a nonce to be exact)"
    : "sending it again makes a second transaction (--joinRetries false)";
}

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
  /** Cancels the pending line saying that every client left, if any. */
  #pendingGone: (() => void) | undefined;
  #goneLine = "";

  /** Starts the clock of a send described by `label` (e.g. `nonce 3 from 0x…`). */
  constructor(label: string, options: SendProgressOptions) {
    this.#label = label;
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#start = this.#now();
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

  /** The mode of this send. */
  get mode(): SendMode {
    return this.#o.mode ?? { nonce: true, joins: true, platformInProcess: false };
  }

  /**
   * Every client that asked for the send stopped waiting: said after
   * {@linkcode GONE_QUIET_MS} unless a repeat joins or the bridge stops first.
   */
  allGone(): void {
    if (this.#abandoned) return;
    this.#abandoned = true;
    const what = this.#status ? ` (${transactionStatusInWords(this.#status)})` : "";
    const goes = this.mode.platformInProcess
      ? `the transaction continues${what} while this bridge runs (its emulator stops with it) and its hash will be printed here`
      : `the transaction continues${what} and its hash will be printed here`;
    this.#goneLine = `the client stopped waiting after ${
      seconds(this.#now() - this.#start)
    }; ${goes}; ${repeatInWords(this.mode)}.`;
    this.#pendingGone?.();
    this.#pendingGone = (this.#o.later ?? defaultLater)(() => this.#flushGone(), GONE_QUIET_MS);
  }

  /** Says the pending line that every client left, now. */
  #flushGone(): void {
    if (this.#dropGone()) this.#line(this.#goneLine);
  }

  /** Drops the pending line that every client left (a repeat joined, the bridge stops). */
  #dropGone(): boolean {
    if (!this.#pendingGone) return false;
    this.#pendingGone();
    this.#pendingGone = undefined;
    return true;
  }

  /** A repeated request joined the send. */
  joined(): void {
    const unsaid = this.#dropGone();
    if (this.#lastLine === undefined && !this.#abandoned) return; // a quick send: nothing to say
    this.#abandoned = false;
    if (unsaid && this.#lastLine === undefined) return; // nothing said yet: nothing to correct
    this.#line(`a repeat of the request joined it after ${seconds(this.#now() - this.#start)}`);
  }

  /** The send ended with `hash`: printed when the wait was long enough to be reported. */
  finished(hash: string): void {
    this.#flushGone();
    if (this.#lastLine === undefined && !this.#abandoned) return;
    this.#line(
      `done after ${seconds(this.#now() - this.#start)}: ${hash}${
        this.#abandoned ? " (no client was waiting for it)" : ""
      }`,
    );
  }

  /** The platform transaction's id, once created. */
  get txId(): string | undefined {
    return this.#txId;
  }

  /** Whether the transaction has been seen with a hash (broadcasting or later). */
  get sent(): boolean {
    return (TRANSACTION_SENT_STATUSES as readonly string[]).includes(this.#status);
  }

  /**
   * The line for a send still under way when the bridge stops (its child
   * exited): whether the transaction goes on, and what a repeat does. Said
   * instead of a pending "the client stopped waiting" line.
   */
  unfinished(): string {
    this.#dropGone();
    const what = this.#status
      ? transactionStatusInWords(this.#status)
      : this.#txId
      ? "pending"
      : "not created yet";
    const tx = this.#txId ? `platform transaction ${this.#txId}` : "send";
    const head = `${tx} (${this.#label}) is still ${what} after ${
      seconds(this.#now() - this.#start)
    } as the bridge stops`;
    if (!this.#txId) return `${head}: nothing was created on the platform.`;
    if (this.mode.platformInProcess) {
      return `${head}: the emulator in this process stops with the bridge, so it will not complete; run the command again.`;
    }
    return `${head}: it continues on the platform; ${
      this.mode.nonce
        ? repeatInWords(this.mode)
        : `a repeat through a new bridge would be a second transaction: check ${this.#txId} on the platform before sending again`
    }.`;
  }

  /** The send failed: printed when nobody is waiting to receive the error. */
  failed(message: string): void {
    this.#flushGone();
    if (!this.#abandoned) return;
    this.#line(`${message} (no client was waiting for it)`);
  }

  #line(text: string): void {
    this.#lastLine = this.#now();
    const tx = this.#txId ? `platform transaction ${this.#txId}` : "send";
    this.#o.write(`${tx} (${this.#label}): ${text}`);
  }
}
