/**
 * The bounds every listener of the program shares (the HTTP server of
 * `bounded_server.ts`: bridge, WebSocket, emulator, `webhooks listen`; and
 * the bridge's IPC socket), so that no local process can kill, freeze or
 * starve a server with connections:
 *
 * - at most `max` open connections, WebSockets and subscribers included;
 *   one more sheds the oldest idle connection (those that never completed a
 *   request first), or is closed at once when none is idle;
 * - a connection must complete its first request within `headerTimeoutMs`
 *   and may stay idle (nothing in flight) no longer than `idleTimeoutMs`
 *   between requests; a WebSocket is exempt and never shed (Deno pings it
 *   and closes it when no pong comes); an IPC connection with subscriptions
 *   is never shed;
 * - {@linkcode acceptLoop}: when the process is out of descriptors (EMFILE),
 *   idle connections are shed and accepting is retried, backing off up to
 *   200 ms, instead of the loop ending.
 *
 * @module
 */

/** Largest default connection cap. */
export const MAX_CONNECTIONS_CEILING = 4096;

/**
 * Half the process's soft descriptor limit (Linux `/proc/self/limits`), between
 * 16 and {@linkcode MAX_CONNECTIONS_CEILING}; the ceiling where the limit cannot
 * be read.
 *
 * @example
 * ```ts
 * defaultMaxConnections(); // 128 under `ulimit -n 256`
 * ```
 */
export function defaultMaxConnections(): number {
  try {
    const text = Deno.readTextFileSync("/proc/self/limits");
    const m = /^Max open files\s+(\d+)/m.exec(text);
    if (m) return Math.max(16, Math.min(MAX_CONNECTIONS_CEILING, Math.floor(Number(m[1]) / 2)));
  } catch { /* not Linux, or not readable */ }
  return MAX_CONNECTIONS_CEILING;
}

/** One open connection as the guard sees it. */
export interface Guarded {
  /** When it was accepted (ms). */
  readonly opened: number;
  /** When a request last started or ended on it (ms). */
  lastActive: number;
  /** Requests in flight. */
  inflight: number;
  /** Whether a request was completed on it. */
  served: boolean;
  /** Not closed by the timeouts (a WebSocket: Deno pings it). */
  exempt: boolean;
  /** Never shed (it has subscriptions). */
  pinned: boolean;
  /** Set once closed or forgotten. */
  closed: boolean;
  /** Closes the connection. */
  close: () => void;
  /** Requests started on it (`bounded_server.ts`: the turn of each request). */
  turns: number;
  /**
   * Resolved when the connection's next request starts (made only when asked
   * for: `bounded_server.ts`'s `RequestInfo.nextRequest`).
   */
  nextRequest?: PromiseWithResolvers<void>;
}

/** Options of {@linkcode ConnectionGuard}. */
export interface GuardOptions {
  /** Time for a new connection to complete its first request (ms). */
  headerTimeoutMs: number;
  /** Time a served connection may stay idle (ms); `Infinity` keeps it. */
  idleTimeoutMs: number;
  /** Told each time connections are shed or timed out (for `--verbose` logs). */
  onShed?: (why: string) => void;
}

/** The open connections of one listener and their bounds. */
export class ConnectionGuard {
  /** The cap: {@linkcode defaultMaxConnections}. */
  readonly max: number;
  readonly #conns = new Set<Guarded>();
  readonly #options: GuardOptions;
  #sweep: ReturnType<typeof setInterval> | undefined;

  /** Builds the guard; {@linkcode ConnectionGuard.start} starts its timeouts. */
  constructor(options: GuardOptions) {
    this.#options = options;
    this.max = defaultMaxConnections();
  }

  /** Open connections now. */
  get size(): number {
    return this.#conns.size;
  }

  /**
   * Counts a new connection, shedding an idle one at the cap; `undefined`
   * (the caller closes it) when the cap is reached and none is idle.
   */
  admit(close: () => void): Guarded | undefined {
    if (this.#conns.size >= this.max && this.shed(1, `the cap of ${this.max} connections`) === 0) {
      return undefined;
    }
    const now = Date.now();
    const g: Guarded = {
      opened: now,
      lastActive: now,
      inflight: 0,
      served: false,
      exempt: false,
      pinned: false,
      turns: 0,
      closed: false,
      close,
    };
    this.#conns.add(g);
    return g;
  }

  /** Closes `g` (once) and stops counting it. */
  drop(g: Guarded): void {
    if (g.closed) return;
    this.forget(g);
    closeQuietly(g);
  }

  /** Stops counting `g`, which closed on its own. */
  forget(g: Guarded): void {
    g.closed = true;
    this.#conns.delete(g);
  }

  /** Closes up to `n` idle connections, never-served first, oldest first; returns how many. */
  shed(n: number, why: string): number {
    const idle: Guarded[] = [];
    for (const g of this.#conns) if (g.inflight === 0 && !g.pinned) idle.push(g);
    idle.sort((a, b) => Number(a.served) - Number(b.served) || a.lastActive - b.lastActive);
    const victims = idle.slice(0, n);
    for (const g of victims) this.drop(g);
    if (victims.length > 0) {
      this.#options.onShed?.(`closed ${victims.length} idle connection(s): ${why}`);
    }
    return victims.length;
  }

  /** Starts closing connections past their timeouts (checked at most every second). */
  start(): void {
    const { headerTimeoutMs, idleTimeoutMs } = this.#options;
    const sweep = setInterval(() => {
      const now = Date.now();
      let n = 0;
      for (const g of this.#conns) {
        if (g.inflight > 0 || g.exempt || g.pinned) continue;
        if (g.served ? now - g.lastActive > idleTimeoutMs : now - g.opened > headerTimeoutMs) {
          this.drop(g);
          n++;
        }
      }
      if (n > 0) this.#options.onShed?.(`closed ${n} idle connection(s) past their timeout`);
    }, Math.max(50, Math.min(1000, headerTimeoutMs / 4)));
    Deno.unrefTimer(sweep);
    this.#sweep = sweep;
  }

  /** Stops the timeouts and closes every connection. */
  closeAll(): void {
    clearInterval(this.#sweep);
    for (const g of [...this.#conns]) this.drop(g);
  }
}

/** Closes `c` (a connection, a listener), which may be closed already. */
export function closeQuietly(c: { close(): void } | undefined): void {
  try {
    c?.close();
  } catch { /* closed already */ }
}

/** True for "out of file descriptors" (EMFILE, ENFILE) as Deno reports it. */
export function outOfDescriptors(e: unknown): boolean {
  const m = e instanceof Error ? e.message : String(e);
  return /os error 2[34]\b|too many open files/i.test(m);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Accepts connections from `listener` until it is closed, giving each one
 * the guard admits to `serve` (and closing the others at once). Out of
 * descriptors, it sheds idle connections (an eighth of them, at least one)
 * and retries, backing off from 5 to 200 ms while none can be shed; any other
 * accept error is retried after 10 ms. It never ends while the listener is
 * open.
 *
 * @example
 * ```ts
 * const guard = new ConnectionGuard({ headerTimeoutMs: 10_000, idleTimeoutMs: 60_000 });
 * const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
 * void acceptLoop(listener, guard, (conn, g) => {
 *   conn.close();
 *   guard.forget(g);
 * });
 * listener.close();
 * ```
 */
export async function acceptLoop<C extends Deno.Conn>(
  listener: Deno.Listener<C>,
  guard: ConnectionGuard,
  serve: (conn: C, g: Guarded) => void,
): Promise<void> {
  let backoff = 0;
  for (;;) {
    let conn: C;
    try {
      conn = await listener.accept();
      backoff = 0;
    } catch (e) {
      if (e instanceof Deno.errors.BadResource || e instanceof Deno.errors.Interrupted) return;
      if (outOfDescriptors(e)) {
        const freed = guard.shed(Math.max(1, Math.ceil(guard.size / 8)), "out of file descriptors");
        backoff = freed > 0 ? 0 : Math.min(200, Math.max(5, backoff * 2));
        await sleep(backoff || 1);
        continue;
      }
      await sleep(10); // ECONNABORTED and the like: the next accept is fine
      continue;
    }
    const g = guard.admit(() => conn.close());
    if (!g) {
      closeQuietly(conn);
      continue;
    }
    serve(conn, g);
  }
}
