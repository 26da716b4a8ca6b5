/**
 * The one HTTP server of every long-running command (`service rpc --http`
 * with its WebSocket, `service webhooks listen`, `service emulator`): a
 * `(Request, RequestInfo) => Promise<Response>` handler served on an accept
 * loop the program owns, with the bounds of `connection_guard.ts` (a cap on
 * connections that counts WebSockets, header and idle timeouts, EMFILE
 * survived by shedding and backing off). Each accepted connection is served
 * by the runtime's own HTTP server for one connection (`http_engine.ts`:
 * Deno.serve's), after the program's own HTTP/1.1 for the first requests on
 * a listener where WebSocket upgrades may come (`http1.ts`).
 * Bodies are the handler's: each reads them with a timeout
 * (`read_body.ts`), so a client that declares a body and never sends it is
 * answered 408 and its connection closed.
 *
 * @module
 */

import { acceptLoop, closeQuietly, ConnectionGuard, type Guarded } from "./connection_guard.ts";
import { type Http1Request, serveHttp1 } from "./http1.ts";
import {
  describeEngine,
  engineFor,
  type EngineName,
  engineWarning,
  type ServeOnConnection,
  serveOnConnectionOf,
} from "./http_engine.ts";

/** Default time for a new connection to complete a request's headers: 10 s. */
export const DEFAULT_HEADER_TIMEOUT_MS = 10_000;
/** Default time for a request's body (the small ones of APIs and webhooks) to arrive: 10 s. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;
/** Default time a served connection may stay idle: 60 s. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

/** Largest WebSocket message on a listener that upgrades: 64 MiB (the bridge's largest body). */
const MAX_WEBSOCKET_MESSAGE_BYTES = 64 * 1024 * 1024;

/** How long an answer with `Connection: close` is given to be written before its connection is closed. */
const CLOSE_AFTER_ANSWER_MS = 500;

/** Options of {@linkcode serveBounded}. */
export interface BoundedServerOptions {
  /** Interface to listen on. */
  hostname: string;
  /** Port (0: a free one). */
  port: number;
  /** Time to complete the first request's headers; default {@linkcode DEFAULT_HEADER_TIMEOUT_MS}. */
  headerTimeoutMs?: number;
  /** Time a connection may stay idle between requests; default {@linkcode DEFAULT_IDLE_TIMEOUT_MS}. */
  idleTimeoutMs?: number;
  /** The answer when the handler throws (default: a plain 500). */
  onError?: (error: unknown) => Response;
  /** A response for which the connection is closed without any answer (fault injection). */
  isDrop?: (response: Response) => boolean;
  /** The handler may upgrade to WebSocket (answer 101, then {@linkcode RequestInfo.upgraded}). */
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
  /** Open connections now, WebSockets included (for tests and logs). */
  readonly connections: number;
  /** The per-connection server in use (`http_engine.ts`). */
  readonly engine: EngineName;
  /** Stops accepting and closes every connection. */
  close(): Promise<void>;
}

/** What a bounded server tells a handler besides the request. */
export interface RequestInfo {
  /**
   * Aborted when the client has gone before the answer was written (its
   * connection closed): the request's `signal` on the fast server; on a
   * connection's first requests (`http1.ts`) the program watches for it.
   */
  readonly clientGone: AbortSignal;
  /**
   * Resolves when the next request on this request's connection starts;
   * never, if none comes. HTTP/1.1 answers a connection's requests in order,
   * and both servers here start a request only once the answer before it is
   * written whole: so then this request's answer was written to a client
   * still connected (a client that gives up closes its connection). Made
   * only when read.
   */
  readonly nextRequest: Promise<void>;
  /**
   * Whether one more WebSocket may be opened: WebSockets may hold at most
   * three quarters of the connection cap (they are not shed: one is closed
   * only after a ping goes unanswered), which keeps room for plain
   * requests. When false, answer 503.
   */
  canUpgrade(): boolean;
  /**
   * Tells the server this request became `socket` (after a 101): the
   * connection stays counted against the cap until the socket closes.
   */
  upgraded(socket: ServerSocket): UpgradedConnection;
  /**
   * Accepts a WebSocket upgrade, as `Deno.upgradeWebSocket` does: on the fast
   * engine the program's own WebSocket (`websocket_server.ts`), which only a
   * connection's first request can ask for (later, it throws a `TypeError`).
   */
  upgradeWebSocket(
    request: Request,
    options: { idleTimeout: number },
  ): { socket: ServerSocket; response: Response };
}

/** What the server and a WebSocket handler use of a socket (Deno's `WebSocket` or the program's own). */
export interface ServerSocket extends EventTarget {
  /** `WebSocket.CONNECTING`, OPEN, CLOSING or CLOSED. */
  readonly readyState: number;
  /** Bytes queued and not yet written. */
  readonly bufferedAmount: number;
  /** Sends a message. */
  send(data: string): void;
  /** Starts the closing handshake. */
  close(code?: number, reason?: string): void;
  /** Each message. */
  onmessage: ((e: MessageEvent) => void) | null;
  /** Once closed. */
  onclose: ((e: CloseEvent) => void) | null;
  /** When the connection failed. */
  onerror: ((e: Event) => void) | null;
}

/** `Deno.upgradeWebSocket`, typed as a {@linkcode ServerSocket} maker. */
const denoUpgrade = Deno.upgradeWebSocket as RequestInfo["upgradeWebSocket"];

/** A fast-engine connection's later request cannot become a WebSocket (see `http1.ts`). */
const lateUpgrade: RequestInfo["upgradeWebSocket"] = () => {
  throw new TypeError("A WebSocket upgrade must be the first request on its connection.");
};

/**
 * The info of a fast-server request (a connection's later requests): made per
 * request on the hot path, so a class with nothing per request but the
 * request; `clientGone` is the request's signal, made only when read (each
 * one costs the runtime a cancel watch).
 */
class LaterRequestInfo implements RequestInfo {
  readonly #request: Request;
  readonly #connection: Guarded;
  readonly #turn: number;
  /** See {@linkcode RequestInfo.canUpgrade}. */
  readonly canUpgrade: () => boolean;
  constructor(request: Request, canUpgrade: () => boolean, connection: Guarded) {
    this.#request = request;
    this.canUpgrade = canUpgrade;
    this.#connection = connection;
    this.#turn = connection.turns;
  }
  /** See {@linkcode RequestInfo.clientGone}. */
  get clientGone(): AbortSignal {
    return this.#request.signal;
  }
  /** See {@linkcode RequestInfo.nextRequest}. */
  get nextRequest(): Promise<void> {
    return nextRequestOf(this.#connection, this.#turn);
  }
  /** Never called: a later request cannot be upgraded ({@linkcode lateUpgrade}). */
  upgraded(): UpgradedConnection {
    throw new TypeError("A WebSocket upgrade must be the first request on its connection.");
  }
  /** See {@linkcode lateUpgrade}. */
  upgradeWebSocket = lateUpgrade;
}

/**
 * {@linkcode RequestInfo.nextRequest} of the request of turn `turn` (its
 * number on connection `g`): resolved if a later one started, else one
 * promise per connection for its next turn.
 */
function nextRequestOf(g: Guarded, turn: number): Promise<void> {
  if (g.turns > turn) return Promise.resolve();
  g.nextRequest ??= Promise.withResolvers<void>();
  return g.nextRequest.promise;
}

/** What a WebSocket's handler tells the server about its connection. */
export interface UpgradedConnection {
  /** A message came: the connection is not idle. */
  touch(): void;
}

/** A handler of a bounded server. */
export type BoundedHandler = (request: Request, info: RequestInfo) => Promise<Response>;

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
  const engine = engineFor();
  const warning = engineWarning(engine);
  if (warning) console.error(warning);
  if (engine === "unbounded") return serveUnbounded(handler, options);
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  const addr = listener.addr as Deno.NetAddr;
  const guard = new ConnectionGuard({
    headerTimeoutMs: options.headerTimeoutMs ?? DEFAULT_HEADER_TIMEOUT_MS,
    idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    onShed: options.onShed,
  });
  const onError = options.onError ??
    (() => new Response("Internal server error.", { status: 500 }));

  /** Marks a request's start on `g` (and tells who waits for it: {@linkcode RequestInfo.nextRequest}). */
  const begin = (g: Guarded) => {
    g.inflight++;
    g.lastActive = Date.now();
    g.turns++;
    if (g.nextRequest !== undefined) {
      g.nextRequest.resolve();
      g.nextRequest = undefined;
    }
  };
  /** Marks its end: the connection is served and idle from now on (if nothing else is in flight). */
  const end = (g: Guarded) => {
    g.inflight--;
    g.served = true;
    g.lastActive = Date.now();
  };
  const maxWebSockets = Math.floor(guard.max * 3 / 4);
  let webSockets = 0;
  const canUpgrade = () => webSockets < maxWebSockets;
  /** The info of a connection's first requests on `g` (served by `http1.ts`). */
  const infoOf = (g: Guarded, { clientGone, upgradeWebSocket }: Http1Request): RequestInfo => {
    const turn = g.turns;
    return {
      clientGone,
      upgradeWebSocket,
      canUpgrade,
      get nextRequest() {
        return nextRequestOf(g, turn);
      },
      upgraded(socket) {
        // Not shed, not timed out: Deno pings it and closes it when no pong comes.
        g.exempt = true;
        g.pinned = true;
        webSockets++;
        let counted = true;
        const gone = () => {
          if (!counted) return;
          counted = false;
          webSockets--;
          guard.forget(g);
        };
        if (socket.readyState === WebSocket.CLOSED) gone();
        else {
          socket.addEventListener("close", gone, { once: true });
          // an upgrade that fails (the client left first) ends with an error and no close event
          socket.addEventListener("error", () => {
            if (socket.readyState !== WebSocket.OPEN && socket.readyState !== WebSocket.CLOSING) {
              gone();
            }
          });
        }
        g.close = () => {
          try {
            socket.close(1001, "closed by the server (too many connections, or stopping)");
          } catch { /* closing */ }
        };
        return {
          touch: () => {
            g.lastActive = Date.now();
          },
        };
      },
    };
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

  /** Serves `conn` with `Deno.serve`'s per-connection server. */
  const serveFast = (conn: Deno.Conn, g: Guarded, serve: ServeOnConnection) => {
    const stop = new AbortController();
    let finished = false;
    g.close = () => {
      if (finished) return;
      aborting = true;
      try {
        stop.abort();
      } finally {
        aborting = false;
      }
    };
    const handle = async (request: Request): Promise<Response> => {
      begin(g);
      let response: Response;
      try {
        response = await handler(request, new LaterRequestInfo(request, canUpgrade, g));
      } catch (e) {
        response = onError(e);
      }
      end(g);
      if (options.isDrop?.(response)) {
        // no answer at all: the connection is closed while the request is still unanswered
        guard.drop(g);
        return new Promise<Response>(() => {});
      }
      // This server does not close after `Connection: close` when the body was not all read
      // (it waits for the rest, e.g. after a 408): closed here once the answer had time to go.
      // Only error answers close (a 200's headers are not read: that costs a Headers object).
      if (response.status >= 400 && response.headers.get("connection") === "close") {
        setTimeout(() => guard.drop(g), CLOSE_AFTER_ANSWER_MS);
      }
      return response;
    };
    try {
      const server = serve(conn, stop.signal, handle, onError, () => {});
      const done = () => {
        finished = true;
        if (!g.exempt) guard.forget(g);
      };
      server.finished.then(done, done);
    } catch {
      finished = true;
      guard.forget(g);
      try {
        conn.close();
      } catch { /* gone */ }
    }
  };

  /**
   * Serves `conn`'s first requests with the program's own HTTP/1.1 (where a
   * WebSocket upgrade may come), then hands it to the fast server.
   */
  const serveFirst = async (conn: Deno.Conn, g: Guarded, serve: ServeOnConnection) => {
    const outcome = await serveHttp1(conn, {
      origin: `http://${addr.hostname}:${addr.port}`,
      maxMessageBytes: MAX_WEBSOCKET_MESSAGE_BYTES,
      handle: async (request, extra) => {
        begin(g);
        try {
          return await handler(request, infoOf(g, extra));
        } catch (e) {
          return onError(e);
        } finally {
          end(g);
        }
      },
    });
    if (outcome === "handoff") serveFast(conn, g, serve);
    else if (outcome === "closed" && !g.exempt) guard.forget(g);
  };

  const fast = serveOnConnectionOf()!;
  globalThis.addEventListener("error", swallow);
  guard.start();
  const loop = acceptLoop(listener, guard, (conn, g) => {
    if (options.upgrades) void serveFirst(conn, g, fast);
    else serveFast(conn, g, fast);
  });
  let closed = false;

  return Promise.resolve({
    hostname: addr.hostname,
    port: addr.port,
    engine,
    get connections() {
      return guard.size;
    },
    async close() {
      if (closed) return;
      closed = true;
      closeQuietly(listener);
      await loop;
      guard.closeAll();
      globalThis.removeEventListener("error", swallow);
    },
  });
}

/** `Deno.serve`, for a runtime without either per-connection server: no connection bounds. */
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
            engine: "unbounded",
            close: () => server.shutdown().catch(() => {}),
          }),
        onError: options.onError,
      }, (request) =>
        handler(request, {
          clientGone: request.signal,
          // not known here: one that never settles, per request (what waits on it goes with it)
          get nextRequest() {
            return new Promise<void>(() => {});
          },
          canUpgrade: () => true,
          upgraded: () => ({ touch() {} }),
          upgradeWebSocket: denoUpgrade,
        }));
      server.finished.catch(() => {});
    } catch (e) {
      reject(e);
    }
  });
}

export { describeEngine };
