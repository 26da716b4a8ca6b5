/**
 * The request timeout of a node client's connections (HTTP and IPC alike):
 * one timer for all requests, armed only while a request is in flight (a
 * timer per request costs more than a pass-through request). Every
 * `min(1 s, timeout)` it fails the requests older than the timeout and
 * closes their connections; it stops once no request is in flight.
 *
 * Its wait is an `AbortSignal.timeout`, not `setTimeout`: in Deno 2.9 the
 * first `setTimeout`/`setInterval` of a process loads the Node timers layer
 * (~5 ms on the start-up path, see `scripts/bench/rpc_startup.ts`); the
 * signal's timer does not.
 *
 * @module
 */

/** A connection the sweep can judge: when its request was sent, and how to fail it. */
export interface TimedConnection {
  /** When the request in flight was sent (`performance.now()`); 0 when idle. */
  readonly busySince: number;
  /** Fails the request in flight with `error` and closes the connection. */
  expire(error: unknown): void;
}

/**
 * Fails requests that outlive `timeoutMs` on the connections `connections()` lists.
 *
 * @example
 * ```ts
 * import type { ConnectionPool, Pooled } from "./connection_pool.ts";
 * import { UpstreamError } from "./upstream.ts";
 * declare const pool: ConnectionPool<TimedConnection & Pooled>;
 * declare const conn: { send(bytes: Uint8Array): Promise<unknown> };
 * declare const bytes: Uint8Array;
 * const timeouts = new RequestTimeouts(
 *   120_000,
 *   () => pool.connections,
 *   () => pool.closed,
 *   (m) => new UpstreamError(m),
 * );
 * const answer = conn.send(bytes);
 * timeouts.arm(); // after each send
 * ```
 */
export class RequestTimeouts {
  readonly #timeoutMs: number;
  readonly #connections: () => Iterable<TimedConnection>;
  readonly #closed: () => boolean;
  readonly #error: (message: string) => Error;
  #armed = false;

  /**
   * `closed()` true stops the sweep for good (the client was closed); `error` makes the error
   * an expired request fails with.
   */
  constructor(
    timeoutMs: number,
    connections: () => Iterable<TimedConnection>,
    closed: () => boolean,
    error: (message: string) => Error,
  ) {
    this.#timeoutMs = timeoutMs;
    this.#connections = connections;
    this.#closed = closed;
    this.#error = error;
  }

  /** The timeout, ms. */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /** Makes sure a sweep is due (call after sending a request). */
  arm(): void {
    if (this.#armed || this.#closed()) return;
    this.#armed = true;
    AbortSignal.timeout(Math.min(1000, this.#timeoutMs)).addEventListener("abort", () => {
      this.#armed = false;
      if (this.#closed()) return;
      const now = performance.now();
      let busy = false;
      for (const c of [...this.#connections()]) {
        if (!c.busySince) continue;
        if (now - c.busySince > this.#timeoutMs) {
          c.expire(this.#error(`no answer from the node within ${this.#timeoutMs} ms`));
        } else busy = true;
      }
      if (busy) this.arm();
    }, { once: true });
  }
}
