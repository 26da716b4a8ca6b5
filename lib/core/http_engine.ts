/**
 * The runtime's HTTP server for one accepted connection, and the body its
 * requests already hold: the only place the program reaches past Deno's
 * stable API. `Deno.serve` is fast and public,
 * but it owns its accept loop (which ends for good on EMFILE) and hides its
 * connections (so none can be capped, timed out or shed); serving each
 * connection the program accepted itself needs
 * `Deno[Deno.internal].serveHttpOnConnection`, the per-connection server
 * `Deno.serve` itself runs (the same speed).
 *
 * It closes a WebSocket as soon as the connection's HTTP part ends (Deno
 * 2.9: the connection's server ends with a forced shutdown, which closes the
 * upgraded sockets it registered), so on a listener that upgrades, a
 * connection's first requests are served by the program's own HTTP/1.1 and
 * WebSocket (`http1.ts`) before it is handed over. A connection dropped
 * without an answer (the emulator's `drop` fault) is closed while its
 * request is still unanswered.
 *
 * Where it is missing, servers fall back to `Deno.serve` without bounds and
 * say so on stderr ({@linkcode engineWarning}); `--verbose` names the engine
 * in use; `tests/core/http_engine_test.ts` fails when it is missing. A Deno
 * upgrade must re-check it (docs/development.md, "What a Deno upgrade must
 * re-check").
 *
 * @module
 */

/** `serveHttpOnConnection`'s shape (Deno 2.8–2.9). */
export type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal,
  handler: (request: Request) => Promise<Response>,
  onError: (error: unknown) => Response,
  onListen: () => void,
) => { finished: Promise<void> };

/** Which server a listener uses: bounded on our accept loop, or `Deno.serve` without bounds. */
export type EngineName = "fast" | "unbounded";

/** The runtime's per-connection HTTP server of `Deno.serve`, if reachable. */
export function serveOnConnectionOf(): ServeOnConnection | undefined {
  const d = Deno as unknown as Record<symbol, Record<string, unknown> | undefined> & {
    internal?: symbol;
  };
  const f = d.internal ? d[d.internal]?.serveHttpOnConnection : undefined;
  return typeof f === "function" && f.length === 5 ? f as ServeOnConnection : undefined;
}

/**
 * The engine every listener gets: `fast`, or `unbounded` when this Deno
 * lacks the per-connection server.
 *
 * @example
 * ```ts
 * engineFor(); // "fast"
 * ```
 */
export function engineFor(): EngineName {
  return serveOnConnectionOf() ? "fast" : "unbounded";
}

/** One line for `--verbose`: which server serves a listener. */
export function describeEngine(engine: EngineName): string {
  return engine === "fast"
    ? "HTTP server: Deno.serve's per-connection server on our own accept loop (bounded; " +
      "a connection's first requests and WebSockets served by the program's own HTTP/1.1)"
    : "HTTP server: Deno.serve without connection bounds";
}

/** The stderr warning for a listener that lost its bounds, or `undefined`. */
export function engineWarning(engine: EngineName): string | undefined {
  return engine === "unbounded"
    ? `warning: this Deno (${Deno.version.deno}) has no serveHttpOnConnection: the server ` +
      "runs without its connection cap and timeouts " +
      '(see docs/development.md, "What a Deno upgrade must re-check").'
    : undefined;
}

/** The key of a `Request`'s inner request in this Deno (found on the first request that has one). */
let innerKey: symbol | undefined;

/** What this program uses of the runtime's inner request (Deno 2.9's `InnerRequest`). */
interface InnerRequest {
  consumeTextBody(): string | null;
  header(name: string): string | null;
}

/** The runtime's inner request of `request`, if it offers `consumeTextBody` and `header`. */
function innerOf(request: Request): InnerRequest | undefined {
  const r = request as unknown as Record<symbol, Partial<InnerRequest> | undefined>;
  if (innerKey === undefined) {
    for (const s of Object.getOwnPropertySymbols(request)) {
      if (s.description === "request" && isInner(r[s])) innerKey = s;
    }
    if (innerKey === undefined) return undefined;
  }
  const inner = r[innerKey];
  return isInner(inner) ? inner : undefined;
}

function isInner(inner: Partial<InnerRequest> | undefined): inner is InnerRequest {
  return typeof inner?.consumeTextBody === "function" && typeof inner.header === "function";
}

/**
 * One header of `request` (`name` in lower case), or `null`: read straight
 * from the runtime's server when it made the request (one call, no `Headers`
 * object: what Deno's own `Headers.get` does for `host`), else with
 * `request.headers.get`.
 *
 * @example
 * ```ts
 * declare const request: Request;
 * requestHeader(request, "content-length"); // "62"
 * ```
 */
export function requestHeader(request: Request, name: string): string | null {
  const inner = innerOf(request);
  return inner ? inner.header(name) : request.headers.get(name);
}

/**
 * The body of a request the runtime's server read whole already (a small
 * POST on a kept-alive connection, the usual case), as text, taken in one
 * call into the runtime: no stream, no promise, no decoding step in
 * JavaScript (what `request.json()` does in Deno 2.9, for text). Invalid
 * UTF-8 becomes U+FFFD, as with `request.text()`. `undefined` when the
 * body has not all arrived, the request was not made by the runtime's
 * server (e.g. `http1.ts`), or this Deno lacks the internal: then read it
 * with `request.text()` (and a timeout). The body is used up either way
 * only when text is returned.
 *
 * @example
 * ```ts
 * declare const request: Request;
 * const text = bufferedText(request) ?? await request.text();
 * ```
 */
export function bufferedText(request: Request): string | undefined {
  const text = innerOf(request)?.consumeTextBody();
  return typeof text === "string" ? text : undefined;
}
