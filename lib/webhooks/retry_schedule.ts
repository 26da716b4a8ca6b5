/**
 * The retry schedule of one notification (`../shared/spec/breaker.md` §1–§2):
 * how one delivery attempt's outcome is classified, and how a notification's
 * status, attempt count and next due time follow from its attempts.
 *
 * Pure functions of their arguments: no clock, no I/O. `breaker simulate`
 * drives them with the times of a log, the emulator with its (scaled) clock.
 *
 * @module
 */

import type { NotificationStatus } from "../core/mod.ts";

/**
 * The outcome of one delivery attempt: an HTTP status, or no status
 * (`TIMED_OUT`: no answer within the delivery timeout; `NO_RESPONSE`:
 * connection refused, reset, DNS or TLS failure).
 */
export type AttemptOutcome =
  | { responseCode: number; failureReason?: undefined }
  | { responseCode?: undefined; failureReason: "TIMED_OUT" | "NO_RESPONSE" };

/** The failure reasons an attempt without a status can have. */
export const FAILURE_REASONS: readonly ("TIMED_OUT" | "NO_RESPONSE")[] = [
  "TIMED_OUT",
  "NO_RESPONSE",
];

/** Seconds from the k-th failed retryable attempt to the next one (k = 1..9), breaker.md §2. */
export const RETRY_DELAYS_SECONDS: readonly number[] = Object.freeze([
  10,
  30,
  120,
  300,
  900,
  1800,
  3600,
  7200,
  14400,
]);

/** Attempts in one series (creation or resend) before the notification is FAILED. */
export const MAX_ATTEMPTS = 10;

/** How one outcome counts, as the table of breaker.md §1 says. */
export interface OutcomeClass {
  /** The notification was delivered (2xx). */
  delivered: boolean;
  /** A further attempt will be made (5xx, 408, 429, TIMED_OUT, NO_RESPONSE). */
  retryable: boolean;
  /** The attempt counts as an error for the endpoint's circuit breaker. */
  error: boolean;
}

const DELIVERED: OutcomeClass = Object.freeze({ delivered: true, retryable: false, error: false });
const RETRY: OutcomeClass = Object.freeze({ delivered: false, retryable: true, error: true });
const FINAL: OutcomeClass = Object.freeze({ delivered: false, retryable: false, error: true });

/**
 * Classifies an attempt's outcome (breaker.md §1):
 *
 * | outcome | delivered | retryable | error |
 * |---|---|---|---|
 * | 2xx | yes | no | no |
 * | 5xx, 408, 429, TIMED_OUT, NO_RESPONSE | no | yes | yes |
 * | other 4xx, 1xx, 3xx | no | no | yes |
 *
 * A status outside 100–599 is treated like 1xx/3xx: an error, not retried.
 * The returned object is frozen and shared; do not mutate it.
 *
 * @example
 * ```ts
 * classifyOutcome({ responseCode: 503 }); // { delivered: false, retryable: true, error: true }
 * classifyOutcome({ failureReason: "TIMED_OUT" }); // retryable error
 * ```
 */
export function classifyOutcome(o: AttemptOutcome): OutcomeClass {
  const code = o.responseCode;
  if (code === undefined) return RETRY; // TIMED_OUT, NO_RESPONSE
  if (code >= 200 && code <= 299) return DELIVERED;
  if (code >= 500 && code <= 599) return RETRY;
  if (code === 408 || code === 429) return RETRY;
  return FINAL;
}

/**
 * The retry parameters. The emulator passes the delays divided by its
 * `--timeScale`; `breaker simulate` uses {@linkcode DEFAULT_RETRY_CONFIG}.
 */
export interface RetryConfig {
  /** Delay after the k-th failed retryable attempt at index k-1, in ms. When shorter than `maxAttempts - 1`, its last value repeats. */
  readonly delaysMs: readonly number[];
  /** Attempts in one series before FAILED. */
  readonly maxAttempts: number;
}

/** The platform's schedule: {@linkcode RETRY_DELAYS_SECONDS} in ms and {@linkcode MAX_ATTEMPTS}. */
export const DEFAULT_RETRY_CONFIG: RetryConfig = Object.freeze({
  delaysMs: Object.freeze(RETRY_DELAYS_SECONDS.map((s) => s * 1000)),
  maxAttempts: MAX_ATTEMPTS,
});

/**
 * The statuses the retry schedule gives a notification: the platform's
 * {@linkcode NotificationStatus} but `ON_HOLD`, which is the endpoint's
 * doing (`on_hold.ts`), not the schedule's.
 */
export type ScheduleStatus = Exclude<NotificationStatus, "ON_HOLD">;

/** Where one notification's delivery stands. */
export interface NotificationProgress {
  /** `IN_PROGRESS` until delivered (`COMPLETED`) or given up (`FAILED`). */
  status: ScheduleStatus;
  /** Attempts made in the current series (a resend starts a new series at 0). */
  attempts: number;
  /** `sentTime` of the last attempt (epoch ms), `null` before the first. */
  lastSentTime: number | null;
  /** When the next attempt is due (epoch ms); `null` unless IN_PROGRESS after a failed attempt. */
  nextAttemptAt: number | null;
}

/**
 * The progress of a new series: a created or resent notification whose first
 * attempt is due now.
 *
 * @example
 * ```ts
 * initialProgress(); // { status: "IN_PROGRESS", attempts: 0, lastSentTime: null, nextAttemptAt: null }
 * ```
 */
export function initialProgress(): NotificationProgress {
  return { status: "IN_PROGRESS", attempts: 0, lastSentTime: null, nextAttemptAt: null };
}

/**
 * The progress after one more attempt made at `sentTime` (breaker.md §2):
 * delivered → `COMPLETED`; non-retryable → `FAILED` at once; the
 * `maxAttempts`-th failed attempt → `FAILED`; otherwise `IN_PROGRESS` with
 * `nextAttemptAt = sentTime + delaysMs[attempts - 1]`.
 *
 * An attempt recorded after the series ended (`COMPLETED` or `FAILED`) can
 * only be the first attempt of a resend, so it starts a fresh series (this
 * is how a replayed log, which does not mark resends, is read). Returns a
 * new object; `p` is not changed.
 *
 * @example
 * ```ts
 * let p = initialProgress();
 * p = afterAttempt(p, { responseCode: 500 }, 1_000);
 * p.nextAttemptAt; // 11_000 (10 s later)
 * ```
 */
export function afterAttempt(
  p: NotificationProgress,
  outcome: AttemptOutcome,
  sentTime: number,
  cfg: RetryConfig = DEFAULT_RETRY_CONFIG,
): NotificationProgress {
  const before = p.status === "IN_PROGRESS" ? p.attempts : 0;
  const attempts = before + 1;
  const c = classifyOutcome(outcome);
  if (c.delivered) {
    return { status: "COMPLETED", attempts, lastSentTime: sentTime, nextAttemptAt: null };
  }
  if (!c.retryable || attempts >= cfg.maxAttempts) {
    return { status: "FAILED", attempts, lastSentTime: sentTime, nextAttemptAt: null };
  }
  const d = cfg.delaysMs;
  const delay = d.length === 0 ? 0 : d[Math.min(attempts - 1, d.length - 1)];
  return {
    status: "IN_PROGRESS",
    attempts,
    lastSentTime: sentTime,
    nextAttemptAt: sentTime + delay,
  };
}
