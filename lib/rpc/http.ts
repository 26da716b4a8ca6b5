/**
 * The HTTP transport: a `(Request) => Promise<Response>` handler that checks
 * the path token, refuses browser attacks (a `Host` that is not a loopback
 * name, i.e. DNS rebinding; an `Origin` that was not allowed, i.e. a web
 * page), enforces the body limit, and answers JSON-RPC errors as JSON, never
 * HTML. A WebSocket upgrade that passes the same checks goes to the
 * `upgrade` handler (`ws.ts`). {@linkcode serveHttp} serves it with bounded connections.
 *
 * @module
 */

import type { Dispatcher } from "./methods.ts";
import { exactIds, RpcError, RpcErrorCode, validateRequest } from "./protocol.ts";
import { hostnameOf, isLoopbackHost, sameText } from "../core/loopback.ts";
import {
  type BoundedHandler,
  describeEngine,
  type RequestInfo,
  serveBounded,
} from "../core/bounded_server.ts";
import { bufferedText, requestHeader } from "../core/http_engine.ts";
import { BodyBudget, BodyRefused, readBody, textWithin } from "../core/read_body.ts";

/** Default largest request body: 64 MiB (far above the largest contract deployment). */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Default time to receive a request body (larger than 64 KiB): 60 s. */
export const DEFAULT_BODY_TIMEOUT_MS = 60_000;

/** Time to receive a body of at most 64 KiB (declared): 10 s, like a request's headers. */
export const SMALL_BODY_TIMEOUT_MS = 10_000;

/** Default bytes all bodies being received at once may hold: 128 MiB (then 503). */
export const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT = 128 * 1024 * 1024;

/** Options of {@linkcode createHttpHandler}. */
export interface HttpHandlerOptions {
  /** Answers the requests that pass the checks. */
  dispatcher: Dispatcher;
  /** Accepted request paths, e.g. `["/3f2a..."]` (the per-run token). */
  paths: readonly string[];
  /** Extra host names accepted in `Host` besides loopback names (e.g. an explicit `--host`). */
  allowedHosts?: readonly string[];
  /** Origins a browser page may call from (`--allowOrigin`); `*` allows any. Default none. */
  allowOrigins?: readonly string[];
  /** Largest body in bytes; default {@linkcode DEFAULT_MAX_BODY_BYTES}. */
  maxBodyBytes?: number;
  /** Time to receive a body larger than 64 KiB; default {@linkcode DEFAULT_BODY_TIMEOUT_MS}. */
  bodyTimeoutMs?: number;
  /** Bytes all bodies being received may hold; default {@linkcode DEFAULT_MAX_BODY_BYTES_IN_FLIGHT}. */
  maxBodyBytesInFlight?: number;
  /** Called for each refused request (for `--verbose` logs). */
  onRefused?: (reason: string) => void;
  /**
   * Answers a WebSocket upgrade that passed the same checks (see `ws.ts`);
   * without it an upgrade is refused as any non-POST request.
   */
  upgrade?: (
    request: Request,
    info?: Pick<RequestInfo, "upgraded" | "canUpgrade" | "upgradeWebSocket">,
  ) => Response;
}

const JSON_HEADERS = { "content-type": "application/json" };

function rpcErrorResponse(status: number, code: number, message: string): Response {
  return new Response(
    JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }),
    { status, headers: JSON_HEADERS },
  );
}

/**
 * Builds the HTTP handler.
 *
 * @example
 * ```ts
 * import type { Dispatcher } from "./methods.ts";
 * declare const dispatcher: Dispatcher, token: string;
 * const handler = createHttpHandler({ dispatcher, paths: ["/" + token] });
 * Deno.serve({ hostname: "127.0.0.1", port: 0 }, handler);
 * ```
 */
export function createHttpHandler(
  options: HttpHandlerOptions,
): (request: Request, info?: unknown) => Promise<Response> {
  const max = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const bodyTimeout = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const budget = new BodyBudget(options.maxBodyBytesInFlight ?? DEFAULT_MAX_BODY_BYTES_IN_FLIGHT);
  const hosts = new Set((options.allowedHosts ?? []).map((h) => h.toLowerCase()));
  const origins = new Set(options.allowOrigins ?? []);
  const anyOrigin = origins.has("*");
  const paths = options.paths;
  const refuse = (status: number, code: number, message: string) => {
    options.onRefused?.(message);
    return rpcErrorResponse(status, code, message);
  };

  const okHosts = new Set<string>(); // Host header values already accepted (hot path)
  return async (request, info) => {
    const host = requestHeader(request, "host");
    if (host === null) {
      return refuse(403, RpcErrorCode.invalidRequest, "Refused: the request has no Host header.");
    }
    if (!okHosts.has(host)) {
      const hostname = hostnameOf(host);
      if (!isLoopbackHost(hostname) && !hosts.has(hostname.toLowerCase())) {
        return refuse(
          403,
          RpcErrorCode.invalidRequest,
          `Refused: Host ${
            JSON.stringify(hostname.slice(0, 100))
          } is not a loopback name (a DNS-rebinding page?). Connect to 127.0.0.1.`,
        );
      }
      if (okHosts.size < 64) okHosts.add(host);
    }
    const origin = requestHeader(request, "origin");
    let cors: Record<string, string> | undefined;
    if (origin !== null) {
      if (!anyOrigin && !origins.has(origin)) {
        return refuse(
          403,
          RpcErrorCode.invalidRequest,
          `Refused: requests from web pages (Origin ${
            JSON.stringify(origin.slice(0, 200))
          }) are not accepted. Start the bridge with --allowOrigin ${
            JSON.stringify(origin.slice(0, 200))
          } to allow that page.`,
        );
      }
      cors = {
        "access-control-allow-origin": origin,
        "vary": "Origin",
      };
    }
    const path = pathOf(request.url);
    let pathOk = false;
    for (const p of paths) if (sameText(p, path)) pathOk = true;
    if (!pathOk) {
      return refuse(
        404,
        RpcErrorCode.invalidRequest,
        "Not found: use the exact address the bridge printed (it includes a per-run path).",
      );
    }
    const method = request.method;
    // a WebSocket handshake is a GET (RFC 6455): a POST's headers are not looked at for it
    if (
      method !== "POST" && options.upgrade &&
      requestHeader(request, "upgrade")?.toLowerCase() === "websocket"
    ) {
      const bounded = (info as Partial<RequestInfo> | undefined)?.upgraded
        ? info as RequestInfo
        : undefined;
      return options.upgrade(request, bounded);
    }
    if (method === "OPTIONS" && cors) {
      return new Response(null, {
        status: 204,
        headers: {
          ...cors,
          "access-control-allow-methods": "POST",
          "access-control-allow-headers": "content-type",
          "access-control-max-age": "600",
        },
      });
    }
    if (method !== "POST") {
      return rpcErrorResponse(
        405,
        RpcErrorCode.invalidRequest,
        "Method not allowed: send JSON-RPC as an HTTP POST.",
      );
    }
    const declared = Number(requestHeader(request, "content-length") ?? "NaN");
    if (declared > max) {
      return rpcErrorResponse(
        413,
        RpcErrorCode.invalidRequest,
        `Request too large: the limit is ${max} bytes.`,
      );
    }
    let text: string;
    try {
      text = declared <= SMALL_BODY_BYTES
        ? bufferedText(request) ?? await textWithin(request, SMALL_BODY_TIMEOUT_MS)
        : await readLarge(request, max, bodyTimeout, budget);
    } catch (e) {
      if (e instanceof BodyRefused) {
        const refused = rpcErrorResponse(e.status, RpcErrorCode.invalidRequest, e.message);
        // the rest of a body that did not come in time is not waited for
        if (e.status === 408) refused.headers.set("connection", "close");
        return refused;
      }
      return rpcErrorResponse(
        400,
        RpcErrorCode.parseError,
        "Parse error: the body could not be read.",
      );
    }
    let value: unknown;
    try {
      value = exactIds(JSON.parse(text), text);
    } catch {
      return withCors(
        rpcErrorResponse(400, RpcErrorCode.parseError, "Parse error: the body is not valid JSON."),
        cors,
      );
    }
    const invalid = Array.isArray(value)
      ? value.length === 0 || value.length > options.dispatcher.maxBatch
      : validateRequest(value) instanceof RpcError;
    // What tells that the client gave up (or read the answer) is read only by a send (see
    // send_book.ts). A bounded server's RequestInfo tells when the client has gone and when its
    // connection carries the next request; Deno.serve's info does not: then the request's signal.
    const bounded = info as Partial<RequestInfo> | undefined;
    const answer = await options.dispatcher.handleValue(
      value,
      text,
      undefined,
      bounded && "clientGone" in bounded ? bounded : {
        get clientGone() {
          return request.signal;
        },
      },
    );
    const headers = cors ? { ...JSON_HEADERS, ...cors } : JSON_HEADERS;
    if (answer === undefined) return new Response(null, { status: 204, headers: cors });
    return new Response(answer, { status: invalid ? 400 : 200, headers });
  };
}

/** The path of an absolute URL without building a URL object (hot path). */
function pathOf(url: string): string {
  const slash = url.indexOf("/", url.indexOf("//") + 2);
  if (slash === -1) return "/";
  let end = url.length;
  const q = url.indexOf("?", slash);
  if (q !== -1) end = q;
  const h = url.indexOf("#", slash);
  if (h !== -1 && h < end) end = h;
  return url.slice(slash, end);
}

function withCors(r: Response, cors: Record<string, string> | undefined): Response {
  if (cors) { for (const [k, v] of Object.entries(cors)) r.headers.set(k, v); }
  return r;
}

/**
 * Bodies up to this size (declared by `Content-Length`) are read whole, with
 * {@linkcode SMALL_BODY_TIMEOUT_MS} on the shared coarse clock (the hot
 * path): a client trickling one holds at most this much, for at most that
 * long, and the connection cap bounds how many do.
 */
const SMALL_BODY_BYTES = 64 * 1024;

/** A body that may be large (or of no declared length): read with the budget and its timeout. */
async function readLarge(
  request: Request,
  max: number,
  timeoutMs: number,
  budget: BodyBudget,
): Promise<string> {
  const bytes = await readBody(request, { maxBytes: max, timeoutMs, budget });
  return new TextDecoder().decode(bytes);
}

/** A running HTTP transport. */
export interface HttpServer {
  /** The bound host. */
  hostname: string;
  /** The bound port. */
  port: number;
  /** Which per-connection server is in use, in words (`--verbose`). */
  engineDescription: string;
  /** Stops accepting and closes connections. */
  close(): Promise<void>;
}

/**
 * Serves `handler` on `hostname:port` (port 0 picks a free one) with the
 * connection bounds of `../core/bounded_server.ts` (a cap on open
 * connections, idle ones shed, header and idle timeouts, an accept loop that
 * survives running out of file descriptors).
 */
export async function serveHttp(
  handler: BoundedHandler,
  options: { hostname: string; port: number; onShed?: (why: string) => void },
): Promise<HttpServer> {
  const server = await serveBounded(handler, {
    hostname: options.hostname,
    port: options.port,
    onShed: options.onShed,
    upgrades: true, // WebSocket on the same address (ws.ts)
    onError: () => rpcErrorResponse(500, RpcErrorCode.internal, "Internal error of the bridge."),
  });
  return {
    hostname: server.hostname,
    port: server.port,
    engineDescription: describeEngine(server.engine),
    close: () => server.close(),
  };
}
