/**
 * One delivery attempt over real HTTP: a POST of the signed body to the
 * endpoint's URL with a timeout; redirects are not followed (breaker.md §1:
 * a 3xx is an outcome of its own). The result has the fields of the
 * platform's `NotificationAttempt`.
 *
 * @module
 */

/** The outcome of one attempt, as the API lists it. */
export interface AttemptRecord {
  /** Epoch ms when the request was started. */
  sentTime: number;
  /** Milliseconds until the status line arrived, or until the failure. */
  duration: number;
  /** HTTP status, when one arrived. */
  responseCode?: number;
  /** Why no status arrived. */
  failureReason?: "TIMED_OUT" | "NO_RESPONSE";
}

/** Options of {@linkcode deliverOnce}. */
export interface DeliverOptions {
  /** The endpoint. */
  url: string;
  /** The exact bytes that were signed. */
  body: string;
  /** Extra headers (the signature). */
  headers?: Record<string, string>;
  /** Delivery timeout in ms; default 10 000. */
  timeoutMs?: number;
  /** Aborts the attempt (e.g. on shutdown); an aborted attempt rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Injectable fetch; default the global one. */
  fetch?: typeof fetch;
  /** Injectable clock; default `Date.now`. */
  now?: () => number;
}

/** Default delivery timeout: 10 seconds. */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;

/**
 * Makes one POST and classifies what happened. Never throws for a network
 * failure (that is an outcome); rejects only when `signal` aborts.
 *
 * @example
 * ```ts
 * const r = await deliverOnce({ url: "http://127.0.0.1:8080/hook", body: "{}" });
 * // { sentTime, duration, responseCode: 200 } or { ..., failureReason: "TIMED_OUT" }
 * ```
 */
export async function deliverOnce(opts: DeliverOptions): Promise<AttemptRecord> {
  const now = opts.now ?? Date.now;
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  const ctl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctl.abort(new DOMException("delivery timed out", "TimeoutError"));
  }, timeoutMs);
  const onAbort = () => ctl.abort(opts.signal?.reason);
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const sentTime = now();
  const t0 = performance.now();
  try {
    const res = await doFetch(opts.url, {
      method: "POST",
      body: opts.body,
      headers: { "content-type": "application/json", ...opts.headers },
      redirect: "manual",
      signal: ctl.signal,
    });
    const duration = Math.round(performance.now() - t0);
    // The answer's body does not matter; release the connection.
    res.body?.cancel().catch(() => {});
    return { sentTime, duration, responseCode: res.status };
  } catch (e) {
    if (opts.signal?.aborted) throw opts.signal.reason ?? e;
    const duration = Math.round(performance.now() - t0);
    return { sentTime, duration, failureReason: timedOut ? "TIMED_OUT" : "NO_RESPONSE" };
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
  }
}
