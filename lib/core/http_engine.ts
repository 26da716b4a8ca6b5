/**
 * The runtime's HTTP servers for one accepted connection: the only place the
 * program reaches past Deno's stable API. `Deno.serve` is fast and public,
 * but it owns its accept loop (which ends for good on EMFILE) and hides its
 * connections (so none can be capped, timed out or shed); serving each
 * connection the program accepted itself needs one of:
 *
 * - `fast`: `Deno[Deno.internal].serveHttpOnConnection`, the per-connection
 *   server `Deno.serve` itself runs (the same speed). It closes a WebSocket as
 *   soon as the connection's HTTP part ends (Deno 2.9: the connection's server
 *   ends with a forced shutdown, which closes the upgraded sockets it
 *   registered), so on a listener that upgrades, a connection's first
 *   requests are served by the program's own HTTP/1.1 and WebSocket
 *   (`http1.ts`) before it is handed over. Aborting it does not reliably keep
 *   an answer already returned off the wire, so it does not serve a listener
 *   that drops connections unanswered (the emulator's `drop` fault).
 * - `events`: `Deno.serveHttp` (removed from Deno 2's types, still shipped):
 *   about 1.4–1.8 times the CPU per request; serves the emulator.
 *
 * Where neither exists, servers fall back to `Deno.serve` without bounds and
 * say so on stderr ({@linkcode engineWarning}); `--verbose` names the engine
 * in use; `tests/core/http_engine_test.ts` fails when either is missing. A
 * Deno upgrade must re-check both (README, "What a Deno upgrade must
 * re-check").
 *
 * @module
 */

/** A request as `Deno.serveHttp` yields it. */
export interface RequestEvent {
  /** The request. */
  request: Request;
  /** Writes the answer. */
  respondWith(r: Response): Promise<void>;
}

/** `Deno.serveHttp`'s shape. */
export type ServeHttp = (conn: Deno.Conn) => AsyncIterable<RequestEvent> & { close(): void };

/** `serveHttpOnConnection`'s shape (Deno 2.8–2.9). */
export type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal,
  handler: (request: Request) => Promise<Response>,
  onError: (error: unknown) => Response,
  onListen: () => void,
) => { finished: Promise<void> };

/** Which per-connection server a listener uses. */
export type EngineName = "fast" | "events" | "unbounded";

/** The runtime's per-connection HTTP server of `Deno.serve`, if reachable. */
export function serveOnConnectionOf(): ServeOnConnection | undefined {
  const d = Deno as unknown as Record<symbol, Record<string, unknown> | undefined> & {
    internal?: symbol;
  };
  const f = d.internal ? d[d.internal]?.serveHttpOnConnection : undefined;
  return typeof f === "function" && f.length === 5 ? f as ServeOnConnection : undefined;
}

/** `Deno.serveHttp`, if this Deno still ships it. */
export function serveHttpOf(): ServeHttp | undefined {
  const f = (Deno as unknown as { serveHttp?: ServeHttp }).serveHttp;
  return typeof f === "function" ? f : undefined;
}

/**
 * The engine a listener gets: `fast` unless it drops connections unanswered,
 * then `events`; `unbounded` when the one it needs is missing.
 *
 * @example
 * ```ts
 * engineFor({ drops: true }); // "events"
 * ```
 */
export function engineFor(needs: { drops?: boolean }): EngineName {
  if (!needs.drops && serveOnConnectionOf()) return "fast";
  if (serveHttpOf()) return "events";
  return "unbounded";
}

/** One line for `--verbose`: which server serves a listener, and why. */
export function describeEngine(engine: EngineName): string {
  switch (engine) {
    case "fast":
      return "HTTP server: Deno.serve's per-connection server on our own accept loop (bounded; " +
        "a connection's first requests and WebSockets served by the program's own HTTP/1.1)";
    case "events":
      return "HTTP server: Deno.serveHttp on our own accept loop (bounded; keeps WebSockets)";
    default:
      return "HTTP server: Deno.serve without connection bounds";
  }
}

/** The stderr warning for a listener that lost its bounds, or `undefined`. */
export function engineWarning(engine: EngineName): string | undefined {
  return engine === "unbounded"
    ? `warning: this Deno (${Deno.version.deno}) has neither Deno.serveHttp nor ` +
      "serveHttpOnConnection: the server runs without its connection cap and timeouts " +
      '(see README, "What a Deno upgrade must re-check").'
    : undefined;
}
