/**
 * `service webhooks listen --forward-to URL`: passes one delivery on to the
 * app under development, raw body and headers as received (less the
 * hop-by-hop ones and `Host`), and turns the app's answer into the answer
 * the platform gets: the app's status and body; 502 when the app cannot be
 * reached (connection refused, reset, DNS); 504 when it does not answer
 * within the timeout. Redirects are not followed (the platform does not
 * follow them either). The app's answer is streamed, never held whole: the
 * platform needs only its status, so at most {@linkcode MAX_APP_ANSWER_BYTES}
 * of its body are kept and passed on, and the rest is not read (the
 * connection is closed), so an app that answers without end cannot grow the
 * receiver.
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

/** The most of the app's answer body kept and passed on to the platform: 64 KiB. */
export const MAX_APP_ANSWER_BYTES = 64 * 1024;

/** The first `max` bytes of `body`, and whether there was more (then the rest is cancelled). */
async function firstBytes(
  body: ReadableStream<Uint8Array> | null,
  max: number,
): Promise<{ bytes: Uint8Array; cut: boolean }> {
  const parts: Uint8Array[] = [];
  let total = 0;
  let cut = false;
  // leaving the loop early cancels the rest of the body
  for await (const value of body ?? []) {
    cut = value.length > max - total;
    parts.push(cut ? value.subarray(0, max - total) : value);
    total += value.length;
    if (cut) break;
  }
  return { bytes: new Uint8Array(await new Blob(parts as BlobPart[]).arrayBuffer()), cut };
}

/** What the app answered, as the platform will see it. */
export interface ForwardResult {
  /** The status the platform gets. */
  status: number;
  /** The body the platform gets. */
  body: Uint8Array;
  /** The app's content type, if any. */
  contentType: string | null;
  /** Whether the app's body was longer than {@linkcode MAX_APP_ANSWER_BYTES} (then cut). */
  cut?: boolean;
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
    const { bytes, cut } = await firstBytes(res.body, MAX_APP_ANSWER_BYTES);
    return {
      status: res.status,
      body: bytes,
      contentType: res.headers.get("content-type"),
      ...(cut ? { cut } : {}),
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
