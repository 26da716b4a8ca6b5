/**
 * `service webhooks listen --forward-to URL`: passes one delivery on to the
 * app under development, raw body and headers as received (less the
 * hop-by-hop ones and `Host`), and turns the app's answer into the answer
 * the platform gets: the app's status and body; 502 when the app cannot be
 * reached (connection refused, reset, DNS); 504 when it does not answer
 * within the timeout. Redirects are not followed (the platform does not
 * follow them either).
 *
 * @module
 */

const HOP_BY_HOP = new Set([
  "host",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "proxy-authorization",
  "proxy-authenticate",
  "content-length",
]);

/** What the app answered, as the platform will see it. */
export interface ForwardResult {
  /** The status the platform gets. */
  status: number;
  /** The body the platform gets. */
  body: Uint8Array;
  /** The app's content type, if any. */
  contentType: string | null;
  /** Why the app was not reached, when it was not (then `status` is 502 or 504). */
  problem?: string;
}

/** POSTs `body` with `headers` to `target` and returns what the platform should get. */
export async function forwardDelivery(
  target: string,
  headers: Headers,
  body: Uint8Array,
  timeoutMs: number,
): Promise<ForwardResult> {
  const out = new Headers();
  for (const [k, v] of headers) if (!HOP_BY_HOP.has(k.toLowerCase())) out.set(k, v);
  try {
    const res = await fetch(target, {
      method: "POST",
      headers: out,
      body: body as BodyInit,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    return {
      status: res.status,
      body: new Uint8Array(await res.arrayBuffer()),
      contentType: res.headers.get("content-type"),
    };
  } catch (e) {
    const timedOut = e instanceof DOMException && e.name === "TimeoutError";
    const problem = timedOut
      ? `the app at ${target} did not answer within ${timeoutMs} ms`
      : `the app at ${target} is unreachable (${(e as Error)?.message?.split("\n")[0] ?? e})`;
    return {
      status: timedOut ? 504 : 502,
      body: new TextEncoder().encode(`service webhooks listen: ${problem}\n`),
      contentType: "text/plain; charset=utf-8",
      problem,
    };
  }
}
