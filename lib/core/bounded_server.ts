/**
 * The one HTTP server of every long-running command (`service rpc --http`,
 * `service webhooks listen`, `service emulator`): a `(Request) =>
 * Promise<Response>` handler served on an accept loop the program owns, so
 * that no local process can kill, freeze or starve it with connections.
 *
 * Why not `Deno.serve`: its accept loop is out of reach. When the process
 * runs out of file descriptors (idle connections opened until the limit), the
 * loop ends with `Too many open files`, its `finished` promise rejects (an
 * unhandled rejection ends the process) and it never accepts again; and it
 * gives no access to connections that never send a request, so they cannot be
 * shed. Here each connection is accepted with `Deno.listen` and served by
 * the runtime's own HTTP server for one connection: the one `Deno.serve`
 * runs per connection (`serveHttpOnConnection`, reached through
 * `Deno[Deno.internal]`: as fast as `Deno.serve`), or, for a server that must
 * drop a connection without any answer (the emulator's fault injection:
 * `isDrop`) or upgrade it to WebSocket (the bridge: `upgrades`; the first
 * closes an upgraded connection as soon as its HTTP part ends),
 * `Deno.serveHttp` (hidden from the types since Deno 2 but still shipped;
 * about 1.7 times the CPU per request of the first). Where
 * neither exists (a future Deno), `Deno.serve` is used as before, without
 * these bounds, and the flood tests fail to say so. The cost, measured by
 * `scripts/bench/rpc_http_ab.ts`, is in the README.
 *
 * The bounds:
 * - at most `maxConnections` open connections (default
 *   {@linkcode defaultMaxConnections}: half the descriptor limit, 16 to
 *   1,024); one more sheds the oldest idle connection (those that never
 *   completed a request first), or is closed at once when none is idle;
 * - when the process is out of descriptors anyway, the accept loop sheds idle
 *   connections and tries again, backing off up to 200 ms, instead of ending;
 * - a connection must complete a request's headers within `headerTimeoutMs`
 *   (10 s) of opening and stay idle no longer than `idleTimeoutMs` (60 s)
 *   between requests; WebSocket connections (101) are the handler's own.
 *
 * @module
 */

/** Largest default connection cap. */
export const MAX_CONNECTIONS_CEILING = 1024;
/** Default time for a new connection to complete a request's headers: 10 s. */
export const DEFAULT_HEADER_TIMEOUT_MS = 10_000;
/** Default time a served connection may stay idle: 60 s. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

/** Options of {@linkcode serveBounded}. */
export interface BoundedServerOptions {
  /** Interface to listen on. */
  hostname: string;
  /** Port (0: a free one). */
  port: number;
  /** Open connections at most; default {@linkcode defaultMaxConnections}. */
  maxConnections?: number;
  /** Time to complete the first request's headers; default {@linkcode DEFAULT_HEADER_TIMEOUT_MS}. */
  headerTimeoutMs?: number;
  /** Time a connection may stay idle between requests; default {@linkcode DEFAULT_IDLE_TIMEOUT_MS}. */
  idleTimeoutMs?: number;
  /** The answer when the handler throws (default: a plain 500). */
  onError?: (error: unknown) => Response;
  /** A response for which the connection is closed without any answer (fault injection). */
  isDrop?: (response: Response) => boolean;
  /**
   * The handler may upgrade to WebSocket (answer 101): served with
   * `Deno.serveHttp`, because the fast per-connection server closes an
   * upgraded connection as soon as its HTTP part ends.
   */
  upgrades?: boolean;
  /** Told each time connections are shed or timed out (for `--verbose` logs). */
  onShed?: (why: string) => void;
}

/** A running server. */
export interface BoundedServer {
  /** The bound interface. */
  hostname: string;
  /** The bound port. */
  port: number;
  /** Open connections now (for tests and logs). */
  readonly connections: number;
  /** Stops accepting and closes every connection. */
  close(): Promise<void>;
}

interface Tracked {
  opened: number;
  lastActive: number;
  inflight: number;
  served: boolean;
  upgraded: boolean;
  closed: boolean;
  /** Closes the connection (idle: at once; with a request in flight: after its answer, or at once for a drop). */
  close: () => void;
}

interface RequestEvent {
  request: Request;
  respondWith(r: Response): Promise<void>;
}

type ServeHttp = (conn: Deno.Conn) => AsyncIterable<RequestEvent> & { close(): void };

/** What a bounded server tells a handler besides the request. */
export interface RequestInfo {
  /**
   * Aborted when the client has gone before the answer was written (its
   * connection closed). On the `Deno.serveHttp` path the request's own
   * `signal` never says so; elsewhere it is the request's `signal`.
   */
  readonly clientGone: AbortSignal;
}

/** A handler of a bounded server. */
export type BoundedHandler = (request: Request, info: RequestInfo) => Promise<Response>;

type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal,
  handler: (request: Request) => Promise<Response>,
  onError: (error: unknown) => Response,
  onListen: () => void,
) => { finished: Promise<void> };

/** The runtime's per-connection HTTP server of `Deno.serve`, if reachable. */
function serveOnConnectionOf(): ServeOnConnection | undefined {
  const d = Deno as unknown as Record<symbol, Record<string, unknown> | undefined> & {
    internal?: symbol;
  };
  const f = d.internal ? d[d.internal]?.serveHttpOnConnection : undefined;
  return typeof f === "function" ? f as ServeOnConnection : undefined;
}

/** The runtime's per-connection HTTP server, if this Deno still ships it. */
function serveHttpOf(): ServeHttp | undefined {
  const f = (Deno as unknown as { serveHttp?: ServeHttp }).serveHttp;
  return typeof f === "function" ? f : undefined;
}

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

/** True for "out of file descriptors" (EMFILE, ENFILE) as Deno reports it. */
function outOfDescriptors(e: unknown): boolean {
  const m = e instanceof Error ? e.message : String(e);
  return /os error 2[34]\b|too many open files/i.test(m);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Serves `handler` on `hostname:port` with the bounds above.
 *
 * @example
 * ```ts
 * const server = await serveBounded((r) => Promise.resolve(new Response("ok")), {
 *   hostname: "127.0.0.1",
 *   port: 0,
 * });
 * await server.close();
 * ```
 */
export function serveBounded(
  handler: BoundedHandler,
  options: BoundedServerOptions,
): Promise<BoundedServer> {
  const onConnection = options.isDrop || options.upgrades ? undefined : serveOnConnectionOf();
  const serveHttp = onConnection ? undefined : serveHttpOf();
  if (!onConnection && !serveHttp) return serveUnbounded(handler, options);
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  const addr = listener.addr as Deno.NetAddr;
  const max = options.maxConnections ?? defaultMaxConnections();
  const headerTimeout = options.headerTimeoutMs ?? DEFAULT_HEADER_TIMEOUT_MS;
  const idleTimeout = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const onError = options.onError ??
    (() => new Response("Internal server error.", { status: 500 }));
  const conns = new Set<Tracked>();
  let closed = false;

  const drop = (t: Tracked) => {
    if (t.closed) return;
    t.closed = true;
    conns.delete(t);
    try {
      t.close();
    } catch { /* already closed */ }
  };

  /** Closes up to `n` idle connections, never-served first, oldest first; returns how many. */
  const shed = (n: number, why: string): number => {
    const idle = [...conns].filter((t) => t.inflight === 0 && !t.upgraded);
    idle.sort((a, b) => Number(a.served) - Number(b.served) || a.lastActive - b.lastActive);
    const victims = idle.slice(0, n);
    for (const t of victims) drop(t);
    if (victims.length > 0) options.onShed?.(`closed ${victims.length} idle connection(s): ${why}`);
    return victims.length;
  };

  /** The handler, counting what is in flight on `t`. */
  const counted = (t: Tracked) =>
  async (
    request: Request,
    clientGone: AbortSignal = request.signal,
  ): Promise<Response> => {
    t.inflight++;
    t.lastActive = Date.now();
    let response: Response;
    try {
      response = await handler(request, { clientGone });
    } catch (e) {
      response = onError(e);
    }
    if (response.status === 101) t.upgraded = true;
    t.inflight--;
    t.served = true;
    t.lastActive = Date.now();
    return response;
  };

  // Closing a connection aborts its server's signal. When the client has just gone and its
  // server has not yet said so, the runtime's abort listener throws BadResource, reported as
  // an uncaught error (it would end the process): swallowed here, only while we abort. This
  // listener is added before any other of the command's (e.g. the child supervisor's).
  let aborting = false;
  const swallow = (e: ErrorEvent) => {
    if (aborting && e.error instanceof Deno.errors.BadResource) {
      e.preventDefault();
      e.stopImmediatePropagation();
    }
  };
  if (onConnection) globalThis.addEventListener("error", swallow);

  /** Serves `conn` with `Deno.serve`'s per-connection server. */
  const serveFast = (conn: Deno.Conn, t: Tracked, serve: ServeOnConnection) => {
    const stop = new AbortController();
    let finished = false;
    t.close = () => {
      if (finished) return;
      aborting = true;
      try {
        stop.abort();
      } finally {
        aborting = false;
      }
    };
    try {
      const server = serve(conn, stop.signal, counted(t), onError, () => {});
      const done = () => {
        finished = true;
        conns.delete(t);
      };
      server.finished.then(done, done);
    } catch {
      finished = true;
      conns.delete(t);
      try {
        conn.close();
      } catch { /* gone */ }
    }
  };

  /** Serves `conn` with `Deno.serveHttp` (a dropped answer closes the connection). */
  const serveEvents = async (conn: Deno.Conn, t: Tracked, serve: ServeHttp) => {
    // The requests not answered yet: when the connection ends first, their client has gone.
    const unanswered = new Set<AbortController>();
    const respond = async (ev: RequestEvent) => {
      const gone = new AbortController();
      unanswered.add(gone);
      try {
        const response = await counted(t)(ev.request, gone.signal);
        if (options.isDrop?.(response)) {
          drop(t);
          return;
        }
        try {
          await ev.respondWith(response);
        } catch {
          gone.abort(); // the client went away
        }
        t.lastActive = Date.now();
      } finally {
        unanswered.delete(gone);
      }
    };
    try {
      const http = serve(conn);
      t.close = () => http.close();
      if (t.closed) http.close();
      for await (const ev of http) void respond(ev);
    } catch { /* a broken connection ends only itself */ }
    for (const gone of unanswered) gone.abort();
    if (!t.upgraded) drop(t);
    else conns.delete(t);
  };

  const accept = async () => {
    let backoff = 0;
    while (!closed) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
        backoff = 0;
      } catch (e) {
        if (closed) return;
        if (outOfDescriptors(e)) {
          const freed = shed(Math.max(1, Math.ceil(conns.size / 8)), "out of file descriptors");
          backoff = freed > 0 ? 0 : Math.min(200, Math.max(5, backoff * 2));
          await sleep(backoff || 1);
          continue;
        }
        if (e instanceof Deno.errors.BadResource || e instanceof Deno.errors.Interrupted) return;
        await sleep(10); // ECONNABORTED and the like: the next accept is fine
        continue;
      }
      if (conns.size >= max && shed(1, `the cap of ${max} connections`) === 0) {
        try {
          conn.close();
        } catch { /* gone */ }
        continue;
      }
      const now = Date.now();
      const t: Tracked = {
        opened: now,
        lastActive: now,
        inflight: 0,
        served: false,
        upgraded: false,
        closed: false,
        close: () => conn.close(),
      };
      conns.add(t);
      if (onConnection) serveFast(conn, t, onConnection);
      else void serveEvents(conn, t, serveHttp!);
    }
  };

  const sweep = setInterval(() => {
    const now = Date.now();
    let n = 0;
    for (const t of conns) {
      if (t.inflight > 0 || t.upgraded) continue;
      if (t.served ? now - t.lastActive > idleTimeout : now - t.opened > headerTimeout) {
        drop(t);
        n++;
      }
    }
    if (n > 0) options.onShed?.(`closed ${n} idle connection(s) past their timeout`);
  }, Math.max(50, Math.min(1000, headerTimeout / 4)));
  Deno.unrefTimer(sweep);
  const loop = accept();

  return Promise.resolve({
    hostname: addr.hostname,
    port: addr.port,
    get connections() {
      return conns.size;
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweep);
      try {
        listener.close();
      } catch { /* closed */ }
      await loop;
      for (const t of [...conns]) drop(t);
      globalThis.removeEventListener("error", swallow);
    },
  });
}

/** `Deno.serve`, for a runtime without `Deno.serveHttp`: no connection bounds. */
function serveUnbounded(
  handler: BoundedHandler,
  options: BoundedServerOptions,
): Promise<BoundedServer> {
  return new Promise((resolve, reject) => {
    try {
      const server = Deno.serve({
        hostname: options.hostname,
        port: options.port,
        onListen: (addr) =>
          resolve({
            hostname: addr.hostname,
            port: addr.port,
            connections: 0,
            close: () => server.shutdown().catch(() => {}),
          }),
        onError: options.onError,
      }, (request) => handler(request, { clientGone: request.signal }));
      server.finished.catch(() => {});
    } catch (e) {
      reject(e);
    }
  });
}
