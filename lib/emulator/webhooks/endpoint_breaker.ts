/**
 * Where the circuit breaker's decision is applied to a live endpoint. The
 * rule itself is the shared pure {@linkcode transition} of `lib/webhooks`
 * (breaker.md §3); this file feeds it one attempt and carries out what it
 * decided: on a suspension the endpoint becomes SUSPENDED, its waiting
 * notifications go ON_HOLD and every admin gets the e-mail; otherwise the
 * band and the last evaluated time are kept on the endpoint's row.
 *
 * @module
 */

import { type BreakerConfig, transition } from "../../webhooks/mod.ts";
import type { Endpoint, Endpoints } from "./endpoints.ts";
import type { WebhookStore } from "./store.ts";
import { type Suspension, suspensionMail } from "./suspension_mail.ts";

/** A suspension the breaker decided, with its time. */
export interface AppliedSuspension extends Suspension {
  /** The evaluation time (the attempt's sentTime, or later; see {@linkcode applyBreaker}). */
  time: number;
}

/** What {@linkcode applyBreaker} works with. */
export interface BreakerContext {
  /** The tables. */
  store: WebhookStore;
  /** The live endpoints (to hold a suspended one's notifications). */
  endpoints: Endpoints;
  /** The breaker in force (durations already scaled). */
  breaker: BreakerConfig;
  /** The breaker as configured (unscaled), for the e-mail's words. */
  configured: BreakerConfig;
  /** The workspace admins' addresses. */
  admins: () => string[];
  /** The console's address without its token, once known (for the e-mail). */
  consoleUrl?: () => string | undefined;
}

/**
 * Evaluates one attempt of an ENABLED endpoint and applies the decision.
 * Call inside the store transaction that records the attempt (`attemptSeq`).
 * Attempts finish out of order when several are in flight; the rules need
 * non-decreasing times per endpoint, so a late finisher is evaluated at the
 * latest time already seen.
 *
 * @example
 * ```ts
 * import type { Endpoint } from "./endpoints.ts";
 * declare const bctx: BreakerContext, ep: Endpoint, attemptSeq: number, sentTime: number;
 * const now = Date.now();
 * const suspended = applyBreaker(bctx, ep, { attemptSeq, sentTime, error: true, now });
 * ```
 */
export function applyBreaker(
  bctx: BreakerContext,
  ep: Endpoint,
  attempt: { attemptSeq: number; sentTime: number; error: boolean; now: number },
): AppliedSuspension | null {
  const { store } = bctx;
  const { now } = attempt;
  const t = Math.max(attempt.sentTime, ep.lastEvalT);
  ep.lastEvalT = t;
  const bandBefore = ep.breaker.bandSince;
  const { effect } = transition(
    ep.breaker,
    { type: "attempt", time: t, error: attempt.error },
    bctx.breaker,
  );
  if (effect?.type === "suspended") {
    ep.row = {
      ...ep.row,
      status: "SUSPENDED",
      updatedAt: now,
      bandSince: null,
      lastAttemptAt: t,
      breakerResetSeq: attempt.attemptSeq,
    };
    store.updateWebhook(ep.row);
    bctx.endpoints.hold(ep.row.id, now);
    const mail = suspensionMail(
      { url: ep.row.url, webhookId: ep.row.id, time: now, consoleUrl: bctx.consoleUrl?.() },
      effect,
      bctx.configured,
    );
    for (const to of bctx.admins()) {
      store.insertMail({ webhookId: ep.row.id, to, ...mail, createdAt: now });
    }
    return {
      reason: effect.reason,
      errorRate: effect.errorRate,
      errors: effect.errors,
      attempts: effect.attempts,
      time: effect.time,
    };
  }
  if (bandBefore !== ep.breaker.bandSince || ep.row.lastAttemptAt !== t) {
    ep.row = { ...ep.row, bandSince: ep.breaker.bandSince, lastAttemptAt: t };
    store.updateBreaker(ep.row.id, ep.row.bandSince, t);
  }
  return null;
}
