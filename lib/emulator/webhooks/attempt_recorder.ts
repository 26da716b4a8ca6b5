/**
 * Records one finished delivery attempt and applies the shared rules of
 * `lib/webhooks` to it, all in one SQLite transaction: the attempt row, the
 * breaker (breaker.md §3, the pure {@linkcode transition}: on a suspension
 * the endpoint becomes SUSPENDED, its waiting notifications go ON_HOLD and
 * every admin gets the e-mail; otherwise the band and the last evaluated
 * time are kept on the endpoint's row) and the notification's retry schedule
 * ({@linkcode afterAttempt}, §2, with {@linkcode classifyOutcome} deciding
 * what the outcome counts as). Nothing here decides on its own.
 *
 * @module
 */

import {
  afterAttempt,
  type AttemptOutcome,
  type BreakerConfig,
  classifyOutcome,
  type RetryConfig,
  transition,
  waitingStatus,
} from "../../webhooks/mod.ts";
import type { AttemptRecord } from "./delivery.ts";
import type { Endpoint, Endpoints } from "./endpoints.ts";
import type { NotificationRow } from "./rows.ts";
import type { WebhookStore } from "./store.ts";
import { type Suspension, suspensionMail } from "./suspension_mail.ts";

/** The workspace's admins, told of each suspension. */
export const ADMINS = ["admin@emulator.local"];

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
  /** The console's address without its token, once known (for the e-mail). */
  consoleUrl?: () => string | undefined;
}

/**
 * Evaluates one attempt of an ENABLED endpoint and applies the decision, in
 * the store transaction that records the attempt (`attemptSeq`). Attempts
 * finish out of order when several are in flight; the rules need
 * non-decreasing times per endpoint, so a late finisher is evaluated at the
 * latest time already seen.
 */
function applyBreaker(
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
    for (const to of ADMINS) {
      store.insertMail({ webhookId: ep.row.id, to, ...mail, createdAt: now });
    }
    return effect;
  }
  if (bandBefore !== ep.breaker.bandSince || ep.row.lastAttemptAt !== t) {
    ep.row = { ...ep.row, bandSince: ep.breaker.bandSince, lastAttemptAt: t };
    store.updateWebhook(ep.row);
  }
  return null;
}

/** What recording an attempt changed. */
export interface Recorded {
  /** The breaker suspended the endpoint. */
  suspended: AppliedSuspension | null;
  /** The notification after the attempt (undefined when it was resent meanwhile or is gone). */
  updated?: NotificationRow;
  /** The notification's new series when it was resent while this attempt was on the wire. */
  resent?: NotificationRow;
}

/**
 * Records `rec`, the outcome of an attempt of notification `started` to
 * endpoint `ep`. `live` is false when the endpoint was deleted (or replaced)
 * meanwhile: the attempt is kept, the breaker is not fed.
 *
 * @example
 * ```ts
 * import { DEFAULT_RETRY_CONFIG } from "../../webhooks/mod.ts";
 * import type { AttemptRecord } from "./delivery.ts";
 * import type { Endpoint } from "./endpoints.ts";
 * import type { NotificationRow } from "./rows.ts";
 * declare const bctx: BreakerContext, ep: Endpoint, started: NotificationRow, rec: AttemptRecord;
 * const retry = DEFAULT_RETRY_CONFIG;
 * const now = Date.now();
 * const { suspended, updated } = recordAttempt(bctx, retry, { ep, live: true, started, rec, now });
 * ```
 */
export function recordAttempt(
  bctx: BreakerContext,
  retry: RetryConfig,
  a: { ep: Endpoint; live: boolean; started: NotificationRow; rec: AttemptRecord; now: number },
): Recorded {
  const { store } = bctx;
  const { ep, live, started, rec, now } = a;
  const outcome: AttemptOutcome = rec.responseCode !== undefined
    ? { responseCode: rec.responseCode }
    : { failureReason: rec.failureReason! };
  const cls = classifyOutcome(outcome);
  const out: Recorded = { suspended: null };
  store.tx(() => {
    const evaluate = live && ep.breaker.status === "ENABLED";
    const attemptSeq = store.insertAttempt({
      notificationId: started.id,
      webhookId: started.webhookId,
      sentTime: rec.sentTime,
      duration: rec.duration,
      responseCode: rec.responseCode ?? null,
      failureReason: rec.failureReason ?? null,
      error: cls.error ? 1 : 0,
      evaluated: evaluate ? 1 : 0,
    });
    if (evaluate) {
      out.suspended = applyBreaker(bctx, ep, {
        attemptSeq,
        sentTime: rec.sentTime,
        error: cls.error,
        now,
      });
    }
    const cur = store.notificationBySeq(started.seq);
    if (!cur) return;
    if (cur.series !== started.series) {
      // resent meanwhile: this attempt counted for the breaker; the new series goes on
      out.resent = cur;
      return;
    }
    const p = afterAttempt(
      {
        status: "IN_PROGRESS",
        attempts: cur.attempts,
        lastSentTime: cur.lastSentTime,
        nextAttemptAt: cur.nextAttemptAt,
      },
      outcome,
      rec.sentTime,
      retry,
    );
    const status = waitingStatus(p.status, live ? ep.row.status : undefined);
    out.updated = {
      ...cur,
      status,
      attempts: p.attempts,
      lastSentTime: p.lastSentTime,
      nextAttemptAt: p.nextAttemptAt,
      updatedAt: now,
    };
    store.updateNotificationProgress(out.updated);
  });
  return out;
}
