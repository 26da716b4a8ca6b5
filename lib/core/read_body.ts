/**
 * Reads a request body with bounds, for the servers that take bodies from
 * anyone who can connect (`service rpc --http`, `service webhooks listen`),
 * and an answer's body from a server the program calls (the platform, a JWKS):
 * at most `maxBytes` per body (a larger declared `Content-Length` is refused
 * before reading), at most `timeoutMs` to receive it (a body trickled byte by
 * byte), and, with a {@linkcode BodyBudget}, at most the budget's bytes held
 * by all bodies being read at once. {@linkcode textWithin} is the cheap form
 * for the small bodies of a hot path: one shared coarse clock instead of a
 * timer per body.
 *
 * @module
 */

import { concatBytes } from "./encoding.ts";
import { BaseError } from "./errors.ts";

/** Why a body was refused: the HTTP status to answer and a message. */
export class BodyRefused extends BaseError {
  override name = "BodyRefused";
  /** 413 (too large), 408 (too slow) or 503 (the budget of all bodies is used up). */
  readonly status: 413 | 408 | 503;
  /** Builds the refusal. */
  constructor(status: 413 | 408 | 503, message: string) {
    super(message);
    this.status = status;
  }
}

function tooSlow(timeoutMs: number): BodyRefused {
  return new BodyRefused(408, `Request too slow: the body must arrive within ${timeoutMs} ms.`);
}

/** Bytes held by the bodies being read, shared by one server's requests. */
export class BodyBudget {
  /** Bytes in use now. */
  used = 0;
  /** Builds a budget of `limit` bytes. */
  constructor(readonly limit: number) {}
}

/** Options of {@linkcode readBody}. */
export interface ReadBodyOptions {
  /** Largest body in bytes. */
  maxBytes: number;
  /** Time allowed to receive the whole body, in ms. */
  timeoutMs: number;
  /** Shared by every body of a server: refused (503) beyond it. */
  budget?: BodyBudget;
}

/**
 * The body's bytes, or a {@linkcode BodyRefused}.
 *
 * @example
 * ```ts
 * declare const request: Request;
 * const bytes = await readBody(request, { maxBytes: 1 << 20, timeoutMs: 30_000 });
 * ```
 */
export async function readBody(
  request: { headers: Headers; body: ReadableStream<Uint8Array> | null },
  options: ReadBodyOptions,
): Promise<Uint8Array> {
  const { maxBytes, timeoutMs, budget } = options;
  const tooLarge = () => new BodyRefused(413, `Request too large: the limit is ${maxBytes} bytes.`);
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) {
    await request.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(tooSlow(timeoutMs)), timeoutMs);
  });
  late.catch(() => {});
  try {
    for (;;) {
      const { value, done } = await Promise.race([reader.read(), late]);
      if (done) break;
      total += value.length;
      if (total > maxBytes) throw tooLarge();
      if (budget) {
        if (budget.used + value.length > budget.limit) {
          throw new BodyRefused(
            503,
            `Busy: the bodies being received already hold ${budget.limit} bytes; try again.`,
          );
        }
        budget.used += value.length;
      }
      parts.push(value);
    }
  } catch (e) {
    await reader.cancel().catch(() => {});
    throw e;
  } finally {
    clearTimeout(timer);
    if (budget) budget.used -= parts.reduce((n, p) => n + p.length, 0);
  }
  return parts.length === 1 ? parts[0] : concatBytes(parts);
}

interface Pending {
  readonly deadline: number;
  readonly timeoutMs: number;
  readonly reject: (e: unknown) => void;
}

/** Small bodies being read with a deadline; checked by one ticker. */
const pending = new Set<Pending>();
let ticker: ReturnType<typeof setInterval> | undefined;

function tick(): void {
  const now = Date.now();
  for (const p of pending) {
    if (p.deadline <= now) {
      pending.delete(p);
      p.reject(tooSlow(p.timeoutMs));
    }
  }
  if (pending.size === 0) {
    clearInterval(ticker);
    ticker = undefined;
  }
}

/**
 * The body as text, or a {@linkcode BodyRefused} 408 when it has not all
 * arrived within `timeoutMs` (checked every 250 ms, so up to 250 ms late).
 * For bodies already known to be small (a declared `Content-Length`); the
 * caller answers the 408 with `Connection: close`.
 *
 * @example
 * ```ts
 * declare const request: Request;
 * const text = await textWithin(request, 10_000);
 * ```
 */
export function textWithin(request: Request, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const p: Pending = { deadline: Date.now() + timeoutMs, timeoutMs, reject };
    pending.add(p);
    if (ticker === undefined) {
      const t = setInterval(tick, 250);
      Deno.unrefTimer(t);
      ticker = t;
    }
    request.text().then((text) => {
      pending.delete(p);
      resolve(text);
    }, (e) => {
      pending.delete(p);
      reject(e);
    });
  });
}
