/**
 * The per-notification projection of `breaker simulate --notifications`,
 * stored compactly (typed arrays, one id index per endpoint) because a log
 * can hold millions of notifications. Each update goes through the one
 * retry rule, {@linkcode afterAttempt}.
 *
 * @module
 */

import {
  afterAttempt,
  type AttemptOutcome,
  type NotificationProgress,
  type NotificationStatus,
  type RetryConfig,
} from "./retry_schedule.ts";

const STATUSES: NotificationStatus[] = ["IN_PROGRESS", "COMPLETED", "FAILED"];
const CODE: Record<NotificationStatus, number> = { IN_PROGRESS: 0, COMPLETED: 1, FAILED: 2 };

/** Where one notification stands after the replay. */
export interface NotificationReport {
  /** The notification. */
  notificationId: string;
  /** Its endpoint. */
  webhookId: string;
  /** Its status after the replay. */
  progress: NotificationProgress;
}

/**
 * Notifications by endpoint and id, in first-seen order.
 *
 * @example
 * ```ts
 * const t = new NotificationTable(DEFAULT_RETRY_CONFIG);
 * t.attempt("w1", "n1", { responseCode: 500 }, 0);
 * [...t.entries()][0].progress.nextAttemptAt; // 10000
 * ```
 */
export class NotificationTable {
  readonly #retry: RetryConfig;
  readonly #index = new Map<string, Map<string, number>>();
  #ids: string[] = [];
  #webhooks: string[] = [];
  #status = new Uint8Array(1024);
  #attempts = new Uint32Array(1024);
  #last = new Float64Array(1024);
  #next = new Float64Array(1024);

  /** An empty table using the given retry schedule. */
  constructor(retry: RetryConfig) {
    this.#retry = retry;
  }

  /** Number of notifications. */
  get size(): number {
    return this.#ids.length;
  }

  /** Applies one (not suppressed) attempt of a notification. */
  attempt(webhookId: string, notificationId: string, outcome: AttemptOutcome, time: number): void {
    let byId = this.#index.get(webhookId);
    if (byId === undefined) this.#index.set(webhookId, byId = new Map());
    let i = byId.get(notificationId);
    let before: NotificationProgress;
    if (i === undefined) {
      i = this.#ids.length;
      if (i === this.#status.length) this.#grow();
      byId.set(notificationId, i);
      this.#ids.push(notificationId);
      this.#webhooks.push(webhookId);
      before = { status: "IN_PROGRESS", attempts: 0, lastSentTime: null, nextAttemptAt: null };
    } else before = this.#get(i);
    const after = afterAttempt(before, outcome, time, this.#retry);
    this.#status[i] = CODE[after.status];
    this.#attempts[i] = after.attempts;
    this.#last[i] = after.lastSentTime ?? NaN;
    this.#next[i] = after.nextAttemptAt ?? NaN;
  }

  #get(i: number): NotificationProgress {
    const last = this.#last[i];
    const next = this.#next[i];
    return {
      status: STATUSES[this.#status[i]],
      attempts: this.#attempts[i],
      lastSentTime: Number.isNaN(last) ? null : last,
      nextAttemptAt: Number.isNaN(next) ? null : next,
    };
  }

  #grow(): void {
    const n = this.#status.length * 2;
    const grow = <T extends Uint8Array | Uint32Array | Float64Array>(
      a: T,
      make: (n: number) => T,
    ) => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.#status = grow(this.#status, (k) => new Uint8Array(k));
    this.#attempts = grow(this.#attempts, (k) => new Uint32Array(k));
    this.#last = grow(this.#last, (k) => new Float64Array(k));
    this.#next = grow(this.#next, (k) => new Float64Array(k));
  }

  /** The notifications in first-seen order (created on the fly: the table stays compact). */
  *entries(): Generator<NotificationReport> {
    for (let i = 0; i < this.#ids.length; i++) {
      yield { notificationId: this.#ids[i], webhookId: this.#webhooks[i], progress: this.#get(i) };
    }
  }
}
