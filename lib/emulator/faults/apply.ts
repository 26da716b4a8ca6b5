/**
 * Where faults are applied: the one place that turns the rules in force
 * (`faults.ts`) into what happens. The request handler calls
 * {@linkcode RequestFaults} (latency, an injected status, a dropped
 * connection); the transaction engine calls {@linkcode transactionFault}
 * (hold, or a forced final status) when a transaction leaves SUBMITTED. The
 * HTTP server only honours the drop marker of {@linkcode dropResponse}.
 * Only the platform's API (`/v1/...`) is affected: never the admin endpoint or the console.
 *
 * @module
 */

import { ApiError, DROP_HEADER, ErrorCode } from "../http/reply.ts";
import { defaultSubStatus, type ForceableStatus } from "../transactions/status.ts";
import type { Faults } from "./faults.ts";

/**
 * Whether `path` is on the platform's API (`/v1/...`), the only paths faults affect: the
 * admin endpoint and the console's own page and routes are the emulator's, never faulted,
 * and a fault without a `path` is not consumed by them.
 */
function isPlatformPath(path: string): boolean {
  return path === "/v1" || path.startsWith("/v1/");
}

/**
 * The response that tells the server to close the connection without any
 * answer (it carries the drop marker header).
 *
 * @example
 * ```ts
 * import { isDropResponse } from "../http/reply.ts";
 * isDropResponse(dropResponse()); // true
 * ```
 */
export function dropResponse(): Response {
  return new Response(null, { status: 599, headers: { [DROP_HEADER]: "1" } });
}

/** What the request faults use of the emulator: its faults in force, clock and log. */
type RequestFaultsContext = { faults: Faults; now(): number; log(line: string): void };

/** How long the token of a dropped request keeps being dropped, ms. */
const DROPPED_TOKEN_MS = 120_000;

/**
 * The request-level faults of one handler: `latency`, `status` and `drop`.
 *
 * @example
 * ```ts
 * import type { EmulatorContext } from "../context.ts";
 * declare const ctx: EmulatorContext;
 * const requestFaults = new RequestFaults(ctx);
 * const early = await requestFaults.before("POST", "/v1/transactions", null);
 * ```
 */
export class RequestFaults {
  readonly #ctx: RequestFaultsContext;
  /**
   * Tokens of dropped requests (ms expiry). Some HTTP clients (Deno's fetch)
   * resend a request transparently when a reused connection closes; the
   * resend carries the identical token and is dropped too, so the client
   * sees the connection error, as it would from the platform.
   */
  readonly #droppedTokens = new Map<string, number>();

  /** The faults in force of `ctx`, with its clock and log. */
  constructor(ctx: RequestFaultsContext) {
    this.#ctx = ctx;
  }

  /**
   * Applied first, before the body is read: a resend of a dropped request
   * (same `Authorization`) is dropped again (`"drop"`); a `latency` fault
   * waits; a `status` fault answers with an {@linkcode ApiError} to send as
   * it is. `undefined`: go on.
   */
  async before(
    method: string,
    path: string,
    authorization: string | null,
  ): Promise<"drop" | ApiError | undefined> {
    if (authorization && this.#droppedTokens.size > 0) {
      const now = this.#ctx.now();
      for (const [k, exp] of this.#droppedTokens) if (exp < now) this.#droppedTokens.delete(k);
      if (this.#droppedTokens.has(authorization)) return "drop";
    }
    if (!isPlatformPath(path)) return undefined;
    const latency = this.#ctx.faults.take("latency", method, path);
    if (latency) await new Promise((r) => setTimeout(r, latency.ms));
    const status = this.#ctx.faults.take("status", method, path);
    if (!status) return undefined;
    const headers: Record<string, string> = {};
    if (status.retryAfter !== undefined) headers["Retry-After"] = String(status.retryAfter);
    return new ApiError(
      status.status,
      status.status === 429
        ? "Too many requests (injected fault)."
        : `Service unavailable (injected fault, status ${status.status}).`,
      status.status === 429 ? ErrorCode.rateLimited : ErrorCode.injected,
      headers,
    );
  }

  /**
   * Whether this request, found, authenticated and parsed, is to be run and
   * then dropped (a `drop` fault, consumed).
   */
  takeDrop(method: string, path: string): boolean {
    return isPlatformPath(path) && this.#ctx.faults.take("drop", method, path) !== undefined;
  }

  /**
   * Records that the request was run and its connection is dropped (logged;
   * a resend with the same `authorization` is dropped too); returns the
   * {@linkcode dropResponse}.
   */
  dropped(method: string, path: string, status: number, authorization: string | null): Response {
    this.#ctx.log(`fault: dropped the connection of ${method} ${path} after answering ${status}`);
    if (authorization) this.#droppedTokens.set(authorization, this.#ctx.now() + DROPPED_TOKEN_MS);
    return dropResponse();
  }
}

/** What the faults decide for a transaction leaving SUBMITTED. */
export type TransactionFault =
  | { kind: "finalStatus"; status: ForceableStatus; subStatus: string }
  | { kind: "hold" };

/**
 * The transaction-level fault for a transaction leaving SUBMITTED, consumed:
 * a `finalStatus` fault first (ends it before anything is signed, with its
 * `subStatus` or the status's default), else a `hold` fault (it waits in
 * PENDING_AUTHORIZATION), else `undefined`.
 *
 * @example
 * ```ts
 * import type { EmulatorContext } from "../context.ts";
 * declare const ctx: EmulatorContext;
 * const fault = transactionFault(ctx.faults);
 * fault?.kind; // "finalStatus", "hold" or undefined (no fault)
 * ```
 */
export function transactionFault(faults: Faults): TransactionFault | undefined {
  const final = faults.take("finalStatus");
  if (final) {
    return {
      kind: "finalStatus",
      status: final.status,
      subStatus: final.subStatus ?? defaultSubStatus(final.status),
    };
  }
  if (faults.take("hold")) return { kind: "hold" };
  return undefined;
}
