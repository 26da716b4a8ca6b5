/**
 * Records one finished delivery attempt and applies the shared rules to it,
 * all in one SQLite transaction: the attempt row, the breaker
 * ({@linkcode applyBreaker}, breaker.md §3) and the notification's retry
 * schedule ({@linkcode afterAttempt}, §2, with {@linkcode classifyOutcome}
 * deciding what the outcome counts as). The rules are the pure functions of
 * `lib/webhooks`; nothing here decides on its own.
 *
 * @module
 */

import {
  afterAttempt,
  type AttemptOutcome,
  classifyOutcome,
  type RetryConfig,
  waitingStatus,
} from "../../webhooks/mod.ts";
import type { AttemptRecord } from "./delivery.ts";
import { type AppliedSuspension, applyBreaker, type BreakerContext } from "./endpoint_breaker.ts";
import type { Endpoint } from "./endpoints.ts";
import type { NotificationRow } from "./rows.ts";

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
 * import type { BreakerContext } from "./endpoint_breaker.ts";
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
