/**
 * The WebSocket transport on the HTTP address: after the HTTP handler's
 * token, `Host` and `Origin` checks (so a web page is refused before the
 * upgrade completes), a request with `Upgrade: websocket` becomes a JSON-RPC
 * connection: one text message per request (single or batch), answered by
 * the same dispatcher as HTTP, plus `eth_subscribe` / `eth_unsubscribe`
 * pushing notifications on that connection. A WebSocket cannot be paused
 * from here, so backpressure is a bound: a client whose unread answers and
 * notifications exceed it gets nothing more (its subscriptions end at once)
 * and is disconnected with close code 1008 and a reason saying so once what
 * was already queued has drained and the messages it sent before the drop
 * have been read (so the close frame is not lost to a connection reset; a
 * client that keeps sending is not waited for), at most 30 s later, instead
 * of being buffered for ever. A connection silent for half of `idleTimeout`
 * is pinged, and closed when no pong comes by the end of it (Deno's
 * `idleTimeout`); the bounded server counts each WebSocket against its
 * connection cap, of which WebSockets may hold three quarters (then an
 * upgrade is answered 503).
 *
 * @module
 */

import type { Dispatcher } from "./methods.ts";
import { errorText, exactIds, RpcErrorCode } from "./protocol.ts";
import type { SubscriptionHub } from "./subscriptions.ts";
import type { RequestInfo, ServerSocket, UpgradedConnection } from "../core/bounded_server.ts";

/** Default bound of unsent bytes per connection before it is dropped: 16 MiB. */
export const DEFAULT_MAX_UNSENT_BYTES = 16 * 1024 * 1024;

/**
 * Default time a WebSocket may stay silent: pinged after 30 s without a
 * frame, closed when no pong has come 30 s later (every client library
 * answers pings by itself; a busy subscriber reads its pings late, behind
 * its notifications: 10 s dropped the 1,000 subscribers of
 * `scripts/bench/ws_fanout.ts` on a loaded machine).
 */
export const DEFAULT_WS_IDLE_TIMEOUT_S = 60;

/** Bound of requests in flight per WebSocket connection, above which it is dropped. */
export const WS_MAX_INFLIGHT = 4096;

/** Options of {@linkcode createWebSocketHandler}. */
export interface WebSocketOptions {
  /** Answers each message. */
  dispatcher: Dispatcher;
  /** Subscriptions; without it `eth_subscribe` answers -32601. */
  hub?: SubscriptionHub;
  /** Unsent bytes (answers and notifications) above which the connection is dropped. */
  maxUnsentBytes?: number;
  /** Called for each dropped connection (for `--verbose` logs and tests). */
  onDropped?: (reason: string) => void;
  /** Seconds without a frame before a ping, doubled before the close; default {@linkcode DEFAULT_WS_IDLE_TIMEOUT_S}. */
  idleTimeoutSeconds?: number;
}

/** How long a dropped connection's queue may take to drain before the socket is closed anyway. */
const DROP_GRACE_MS = 30_000;

/** How often a dropped connection checks whether it can be closed. */
const DROP_TICK_MS = 20;

/**
 * Ticks without a message from a dropped client before its socket is closed
 * (several, so a process that was starved, whose timer may run before the
 * input waiting for it is read, does not mistake a backlog for quiet).
 */
const QUIET_TICKS = 3;

/**
 * The most a drained, dropped connection reads (and discards) while it waits
 * for its client to go quiet: more than was in flight when the client learnt
 * of the drop (socket buffers), so a client that keeps sending is not waited
 * for (reading its flood costs memory): it is closed, its unread input reset.
 */
const DRAIN_LIMIT_CHARS = 4 * 1024 * 1024;

/** The close code for a client that does not keep up (RFC 6455 "policy violation"). */
export const SLOW_CLIENT_CLOSE_CODE = 1008;

/** What the bounded server tells an upgrade (`../core/bounded_server.ts`). */
export type UpgradeInfo = Pick<RequestInfo, "upgraded" | "canUpgrade" | "upgradeWebSocket">;

/**
 * Builds the upgrade handler: `(request) => response` for requests already
 * checked by the HTTP handler.
 *
 * @example
 * ```ts
 * import type { Dispatcher } from "./methods.ts";
 * import type { SubscriptionHub } from "./subscriptions.ts";
 * declare const dispatcher: Dispatcher, hub: SubscriptionHub;
 * const upgrade = createWebSocketHandler({ dispatcher, hub });
 * const handler = (request: Request): Response => {
 *   // after the checks:
 *   if (request.headers.get("upgrade")?.toLowerCase() === "websocket") return upgrade(request);
 *   return new Response("not found", { status: 404 });
 * };
 * ```
 */
export function createWebSocketHandler(
  options: WebSocketOptions,
): (request: Request, info?: UpgradeInfo) => Response {
  const maxUnsent = options.maxUnsentBytes ?? DEFAULT_MAX_UNSENT_BYTES;
  const idleTimeout = options.idleTimeoutSeconds ?? DEFAULT_WS_IDLE_TIMEOUT_S;
  return (request, info) => {
    if (info && !info.canUpgrade()) {
      return new Response(
        errorText(
          RpcErrorCode.internal,
          "Busy: too many WebSocket connections are open; try again, or use HTTP for requests.",
        ),
        { status: 503, headers: { "content-type": "application/json", connection: "close" } },
      );
    }
    let upgraded: { socket: ServerSocket; response: Response };
    try {
      upgraded = info
        ? info.upgradeWebSocket(request, { idleTimeout })
        : Deno.upgradeWebSocket(request, { idleTimeout });
    } catch {
      return new Response(
        errorText(RpcErrorCode.invalidRequest, "Bad WebSocket upgrade request."),
        { status: 400, headers: { "content-type": "application/json" } },
      );
    }
    const { socket, response } = upgraded;
    const conn: UpgradedConnection = info?.upgraded(socket) ?? { touch() {} };
    let inflight = 0;
    let open = true;
    /** Characters received so far (also after a drop): a dropped client's close waits for quiet. */
    let received = 0;
    const drop = (reason: string) => {
      if (!open) return;
      open = false;
      options.onDropped?.(reason);
      session?.close();
      // Nothing more is queued for this client. Closing now (or with its input unread: a reset)
      // would lose what is queued, close frame included: see the module doc for when it closes.
      const started = Date.now();
      const atDrop = received;
      let seen = received;
      let quiet = 0;
      const timer = setInterval(() => {
        if (received !== seen) {
          seen = received;
          quiet = 0;
        } else quiet++;
        const flooding = received - atDrop > DRAIN_LIMIT_CHARS;
        if (
          socket.readyState !== WebSocket.OPEN ||
          (socket.bufferedAmount === 0 && quiet >= QUIET_TICKS) || flooding ||
          Date.now() - started > DROP_GRACE_MS
        ) {
          clearInterval(timer);
          try {
            socket.close(SLOW_CLIENT_CLOSE_CODE, reason);
          } catch { /* closing */ }
        }
      }, DROP_TICK_MS);
    };
    const send = (text: string) => {
      if (!open || socket.readyState !== WebSocket.OPEN) return;
      if (socket.bufferedAmount > maxUnsent) {
        drop(`client too slow: over ${maxUnsent} bytes of answers unread`);
        return;
      }
      socket.send(text);
    };
    const session = options.hub?.session(send);
    const extra = session?.methods;
    // Per request until its answer is sent: aborted when the client closes the socket first,
    // so a send it asked for may be joined by a repeat (send_book.ts).
    const unanswered = new Set<AbortController>();
    socket.onmessage = (event) => {
      const data = event.data as string | ArrayBuffer;
      received += typeof data === "string" ? data.length : data.byteLength;
      if (!open) return;
      conn.touch();
      const text = typeof data === "string" ? data : new TextDecoder().decode(data);
      let value: unknown;
      try {
        value = exactIds(JSON.parse(text), text);
      } catch {
        send(errorText(RpcErrorCode.parseError, "Parse error: the message is not valid JSON."));
        return;
      }
      if (++inflight > WS_MAX_INFLIGHT) {
        drop(`client too slow: over ${WS_MAX_INFLIGHT} requests unanswered`);
        return;
      }
      const gone = new AbortController();
      unanswered.add(gone);
      options.dispatcher.handleValue(value, text, extra, { clientGone: gone.signal }).then(
        (answer) => {
          inflight--;
          if (answer !== undefined) send(answer);
          if (!open || socket.readyState !== WebSocket.OPEN) gone.abort(); // never sent
          unanswered.delete(gone);
        },
      );
    };
    socket.onclose = socket.onerror = () => {
      open = false;
      session?.close();
      for (const gone of unanswered) gone.abort();
    };
    return response;
  };
}
