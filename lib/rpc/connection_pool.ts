/**
 * The pool of kept-alive connections to the node, shared by the HTTP and the
 * IPC upstream: idle connections are reused, at most `max` are open, callers
 * beyond that wait in order, and a connection that closes is forgotten (a
 * waiter may then open a new one).
 *
 * @module
 */

/** What the pool needs of a connection. */
export interface Pooled {
  /** True once the connection is closed (it is then never handed out). */
  readonly closed: boolean;
  /** Closes the connection; it must then call the `onClose` it was opened with. */
  close(): void;
}

/** Options of {@linkcode ConnectionPool}. */
export interface ConnectionPoolOptions<C extends Pooled> {
  /** Opens a connection; it calls `onClose(c)` when it closes for any reason. */
  open: (onClose: (c: C) => void) => Promise<C>;
  /** Most connections open at once. */
  max: number;
  /** The error to throw (the pool is closing, or opening failed). */
  error: (message: string, cause?: unknown) => Error;
  /** The node as it may be shown in messages (no secrets). */
  shownUrl: string;
}

/**
 * A bounded pool of connections.
 *
 * @example
 * ```ts
 * declare const open: (onClose: (c: Pooled) => void) => Promise<Pooled>;
 * const pool = new ConnectionPool({
 *   open,
 *   max: 8,
 *   error: (m, cause) => new Error(m, { cause }),
 *   shownUrl: "ipc:///tmp/anvil.ipc",
 * });
 * const c = await pool.acquire();
 * pool.release(c);
 * ```
 */
export class ConnectionPool<C extends Pooled> {
  readonly #o: ConnectionPoolOptions<C>;
  readonly #idle: C[] = [];
  readonly #all = new Set<C>();
  readonly #queue: { resolve: (c: C) => void; reject: (e: unknown) => void }[] = [];
  #opening = 0;
  #closed = false;

  /** A pool; nothing is opened until the first {@linkcode acquire}. */
  constructor(options: ConnectionPoolOptions<C>) {
    this.#o = options;
  }

  /** Every open connection (e.g. for the timeout sweep). */
  get connections(): ReadonlySet<C> {
    return this.#all;
  }

  /** True after {@linkcode close}. */
  get closed(): boolean {
    return this.#closed;
  }

  /** An idle connection, a new one while under `max`, or the next released one. */
  async acquire(): Promise<C> {
    if (this.#closed) throw this.#o.error("the bridge is stopping");
    const idle = this.#idle.pop();
    if (idle) return idle;
    if (this.#all.size + this.#opening < this.#o.max) {
      this.#opening++;
      try {
        let c: C;
        try {
          c = await this.#o.open((x) => this.#forget(x));
        } catch (e) {
          throw this.#o.error(
            `the node at ${this.#o.shownUrl} cannot be reached (${
              e instanceof Error ? e.message : String(e)
            })`,
            e,
          );
        }
        this.#all.add(c);
        return c;
      } finally {
        this.#opening--;
      }
    }
    return await new Promise<C>((resolve, reject) => this.#queue.push({ resolve, reject }));
  }

  /** Gives a connection back after a complete exchange. */
  release(c: C): void {
    if (c.closed) return;
    const next = this.#queue.shift();
    if (next) next.resolve(c);
    else this.#idle.push(c);
  }

  /** Closes every connection and fails every waiter; later acquires fail. */
  close(): void {
    this.#closed = true;
    for (const c of [...this.#all]) c.close();
    for (const q of this.#queue.splice(0)) q.reject(this.#o.error("the bridge is stopping"));
  }

  #forget(c: C): void {
    this.#all.delete(c);
    const i = this.#idle.indexOf(c);
    if (i !== -1) this.#idle.splice(i, 1);
    // A waiter queued for a connection may now open a new one.
    const next = this.#queue.shift();
    if (next && !this.#closed) this.acquire().then(next.resolve, next.reject);
  }
}
