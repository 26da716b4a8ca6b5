/**
 * The book of sends in flight and recently finished, and the rule that
 * joins a repeated request to the send it repeats.
 *
 * Custody is slow: signing takes seconds, an approval minutes to hours, and
 * clients time out long before. Some send the same request again when they
 * do (forge after 45 s, any retrying proxy). A repeat must not pay twice, so
 * a request identical to a send of the book ({@linkcode SendIdentity}) joins
 * it: one platform transaction, and every waiting request gets its hash or
 * its error. The rule:
 *
 * - **With a nonce** the identity is exact (one nonce is one transaction): a
 *   repeat joins the send while it is in flight and for
 *   {@linkcode DEFAULT_KEEP_MS} after it succeeded (a repeat then gets the
 *   same hash), or after it failed until a client has received that failure.
 * - **Without a nonce** two identical sends that are both awaited are two
 *   intents and stay two transactions, as on a node. A repeat joins a send only
 *   when every client that asked for it has gone (its connection closed or its
 *   HTTP request was abandoned) and no client has received its answer yet: a
 *   send left by its client is joined once, and after a joined repeat received
 *   the answer, a further identical request is a new intent. A repeat that
 *   finds the earlier request's client still there waits up to
 *   {@linkcode REPEAT_GRACE_MS} to see it leave (a timed-out client sends
 *   again before its old connection is seen closed). An answer counts as
 *   received when that grace has passed without the client leaving, or at
 *   once when the client's HTTP/1.1 connection carries its next request
 *   ({@linkcode SendClient.nextRequest}): a script sending the same transfer
 *   twice in a row does not wait. `joinAbandoned: false`
 *   (`--joinRetries false`) turns this off.
 * - A send that failed before any platform transaction was created (a refused
 *   request, a stale nonce) is forgotten at once: its repeat tries again.
 *
 * Nothing here talks to the platform; `custody.ts` starts the sends.
 *
 * @module
 */

import type { SendIdentity } from "./send_identity.ts";

/** How long a finished send stays joinable: 10 minutes. */
export const DEFAULT_KEEP_MS = 10 * 60_000;

/**
 * How long a repeat without a nonce waits for the clients of an identical
 * send in flight to be seen leaving: 250 ms. A client that times out closes
 * its connection and sends again at once, and the new request can arrive
 * before the bridge has noticed the old connection close. Without this grace
 * that race makes the retry a second transaction; with it, a deliberate second
 * identical send whose twin is still awaited starts this much later.
 */
export const REPEAT_GRACE_MS = 250;

/** What the transport knows of the client that asked for a send. */
export interface SendClient {
  /**
   * Aborted when the client has gone before its answer was written: its
   * HTTP request was abandoned, or its IPC/WebSocket connection closed.
   */
  readonly clientGone?: AbortSignal;
  /**
   * HTTP/1.1: resolves when the client's connection carries its next
   * request. Answers go in order on a connection, so the answer before was
   * then written whole to a client still connected: it counts as received.
   */
  readonly nextRequest?: Promise<void>;
}

/** Options of {@linkcode SendBook}. */
export interface SendBookOptions {
  /** Whether a no-nonce repeat joins an abandoned send; default true. */
  joinAbandoned?: boolean;
  /** How long a finished send stays joinable; default {@linkcode DEFAULT_KEEP_MS}. */
  keepMs?: number;
  /** See {@linkcode REPEAT_GRACE_MS} (the default). */
  repeatGraceMs?: number;
  /**
   * Whether a failure means that a platform transaction exists (then the
   * failure is kept for a repeat to learn it); default: never.
   */
  createdBy?: (error: unknown) => boolean;
  /** Clock; default `Date.now`. */
  now?: () => number;
}

/** What the book tells a send about the clients waiting for it. */
export interface SendWatch {
  /** The identity of the send. */
  readonly identity: SendIdentity;
  /** How many clients are waiting for the send right now. */
  readonly waiting: number;
  /** Called when the last waiting client goes while the send is in flight. */
  onAllGone?: () => void;
  /** Called when a repeated request joins the send (with the clients now waiting). */
  onJoin?: () => void;
}

interface Entry extends SendWatch {
  waiting: number;
  outcome: Promise<string>;
  /** An answer reached a client that was still waiting for it. */
  delivered: boolean;
  /** Answers handed to a client, not yet confirmed received (see `#deliver`). */
  delivering: number;
  /** When the send finished, else undefined. */
  settledAt: number | undefined;
  failed: boolean;
  /** The failure is one after which a platform transaction exists. */
  created: boolean;
  /** Called when a client leaves or the send settles (for a repeat in its grace). */
  readonly changed: Set<() => void>;
}

/**
 * Sends in flight and recently finished, by identity; see the module doc.
 *
 * @example
 * ```ts
 * import type { SendIdentity } from "./send_identity.ts";
 * declare const identity: SendIdentity;
 * declare function createAndWait(): Promise<string>; // creates the transaction, waits for its hash
 * const book = new SendBook();
 * const gone = new AbortController();
 * const first = book.send(identity, { clientGone: gone.signal }, () => createAndWait());
 * gone.abort(); // the client timed out and closed its connection
 * const repeat = book.send(identity, undefined, () => createAndWait()); // joins: same hash
 * ```
 */
export class SendBook {
  readonly #joinAbandoned: boolean;
  readonly #keepMs: number;
  readonly #graceMs: number;
  readonly #createdBy: (error: unknown) => boolean;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry[]>();

  /** An empty book. */
  constructor(options: SendBookOptions = {}) {
    this.#joinAbandoned = options.joinAbandoned ?? true;
    this.#keepMs = options.keepMs ?? DEFAULT_KEEP_MS;
    this.#graceMs = options.repeatGraceMs ?? REPEAT_GRACE_MS;
    this.#createdBy = options.createdBy ?? (() => false);
    this.#now = options.now ?? Date.now;
  }

  /** How many sends the book holds (in flight or kept), for tests and `--verbose`. */
  get size(): number {
    this.#purge();
    let n = 0;
    for (const list of this.#entries.values()) n += list.length;
    return n;
  }

  /**
   * The hash of the send `identity`: a joinable send of the book's, or a
   * new one made by `start` (which gets the send's {@linkcode SendWatch}).
   * `client` is what the transport knows of the client that asked (none:
   * it stays until the answer, which it receives).
   */
  async send(
    identity: SendIdentity,
    client: SendClient | undefined,
    start: (watch: SendWatch) => Promise<string>,
  ): Promise<string> {
    this.#purge();
    if (identity.nonce === undefined && this.#joinAbandoned && !this.#joinable(identity)) {
      const twin = this.#entries.get(identity.key)?.find((e) => !e.delivered);
      if (twin) await this.#graceFor(twin);
      this.#purge();
    }
    const joinable = this.#joinable(identity);
    if (joinable) {
      const answer = this.#wait(joinable, client);
      joinable.onJoin?.();
      return answer;
    }
    const entry: Entry = {
      identity,
      waiting: 0,
      outcome: Promise.resolve(""),
      delivered: false,
      delivering: 0,
      settledAt: undefined,
      failed: false,
      created: false,
      changed: new Set(),
    };
    try {
      entry.outcome = start(entry);
    } catch (e) {
      entry.outcome = Promise.reject(e);
    }
    const settled = (failed: boolean, error?: unknown) => {
      entry.settledAt = this.#now();
      entry.failed = failed;
      entry.created = failed && this.#createdBy(error);
      changed(entry);
    };
    entry.outcome.then(() => settled(false), (e) => settled(true, e));
    const list = this.#entries.get(identity.key);
    if (list) list.push(entry);
    else this.#entries.set(identity.key, [entry]);
    return this.#wait(entry, client);
  }

  /** The send of the book `identity` joins, if any. */
  #joinable(identity: SendIdentity): Entry | undefined {
    const list = this.#entries.get(identity.key);
    if (!list) return undefined;
    for (const e of list) {
      if (identity.nonce !== undefined) {
        if (!(e.failed && e.delivered)) return e;
      } else if (
        this.#joinAbandoned && e.waiting === 0 && e.delivering === 0 && !e.delivered
      ) return e;
    }
    return undefined;
  }

  /**
   * Resolves when every client of `twin` has left (and no answer of it is
   * on its way), or an answer of it was received, or after the grace
   * ({@linkcode REPEAT_GRACE_MS}), whichever comes first.
   */
  #graceFor(twin: Entry): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        twin.changed.delete(check);
        resolve();
      };
      const check = () => {
        if (twin.delivered || (twin.waiting === 0 && twin.delivering === 0)) done();
      };
      const timer = setTimeout(done, this.#graceMs);
      twin.changed.add(check);
      check();
    });
  }

  /** One client's wait for `entry`, counted while the client is there. */
  #wait(entry: Entry, client: SendClient | undefined): Promise<string> {
    const clientGone = client?.clientGone;
    if (clientGone?.aborted) {
      return entry.outcome; // gone already: nobody is counted, nothing is delivered
    }
    entry.waiting++;
    let here = true;
    const leave = () => {
      if (!here) return;
      here = false;
      entry.waiting--;
    };
    const onGone = () => {
      leave();
      changed(entry);
      if (entry.waiting === 0 && entry.settledAt === undefined) entry.onAllGone?.();
    };
    clientGone?.addEventListener("abort", onGone, { once: true });
    const done = () => {
      clientGone?.removeEventListener("abort", onGone);
      if (here) this.#deliver(entry, client);
      leave();
    };
    return entry.outcome.finally(done);
  }

  /**
   * The answer of `entry` was handed to a client that was still there. It
   * counts as received unless the client is seen gone within the grace: a
   * client that gives up at the very moment its answer is written never
   * reads it, and its repeat must still join (the transports abort
   * `clientGone` only while the request's answer is unwritten). It counts
   * as received at once when `nextRequest` (see {@linkcode SendClient})
   * resolves first.
   */
  #deliver(entry: Entry, client: SendClient | undefined): void {
    const clientGone = client?.clientGone;
    if (!clientGone) {
      entry.delivered = true;
      changed(entry);
      return;
    }
    entry.delivering++;
    let settled = false;
    const settle = (received: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clientGone.removeEventListener("abort", lost);
      entry.delivering--;
      if (received) entry.delivered = true;
      changed(entry);
    };
    const lost = () => settle(false);
    const timer = setTimeout(() => settle(true), this.#graceMs);
    clientGone.addEventListener("abort", lost, { once: true });
    client?.nextRequest?.then(() => settle(!clientGone.aborted));
  }

  /** Forgets the sends that can no longer be joined. */
  #purge(): void {
    const now = this.#now();
    for (const [key, list] of this.#entries) {
      const keep = list.filter((e) => {
        if (e.settledAt === undefined) return true;
        if (now - e.settledAt >= this.#keepMs) return false;
        if (e.failed && (!e.created || e.delivered)) return false;
        if (e.identity.nonce === undefined && e.delivered) return false;
        return true;
      });
      if (keep.length === 0) this.#entries.delete(key);
      else if (keep.length !== list.length) this.#entries.set(key, keep);
    }
  }
}

/** Tells whoever watches `entry` (a repeat in its grace) that it changed. */
function changed(entry: Entry): void {
  for (const f of [...entry.changed]) f();
}
