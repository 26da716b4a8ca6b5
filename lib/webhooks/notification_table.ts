/**
 * The per-notification projection of `breaker simulate --notifications`,
 * stored compactly (typed arrays, one id index per endpoint) because a log
 * can hold millions of notifications. Each update goes through the one
 * retry rule, {@linkcode afterAttempt}.
 *
 * Given an `onFinal` callback, the table keeps only the notifications still
 * IN_PROGRESS: one that reaches COMPLETED or FAILED is handed to `onFinal`
 * and forgotten (its slot is reused), so memory follows the notifications
 * in flight, not the log. A later attempt of a forgotten notification (a
 * resend) starts a new entry: exactly what {@linkcode afterAttempt} does
 * with a final status (a fresh series), so every series is reported.
 *
 * @module
 */

import {
  afterAttempt,
  type AttemptOutcome,
  initialProgress,
  type NotificationProgress,
  type RetryConfig,
  type ScheduleStatus,
} from "./retry_schedule.ts";

const STATUSES: ScheduleStatus[] = ["IN_PROGRESS", "COMPLETED", "FAILED"];
const CODE: Record<ScheduleStatus, number> = { IN_PROGRESS: 0, COMPLETED: 1, FAILED: 2 };

/** Called with a notification that reached its final status, and the line of that attempt. */
export type OnFinal = (report: NotificationReport, line: number) => void;

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
 * import { DEFAULT_RETRY_CONFIG } from "./retry_schedule.ts";
 * const t = new NotificationTable(DEFAULT_RETRY_CONFIG);
 * t.attempt("w1", "n1", { responseCode: 500 }, 0);
 * [...t.entries()][0].progress.nextAttemptAt; // 10000
 * ```
 */
export class NotificationTable {
  readonly #retry: RetryConfig;
  readonly #onFinal: OnFinal | null;
  readonly #index = new Map<string, Map<string, number>>();
  // by slot; a slot of a forgotten notification is on #free (its id is undefined)
  #ids: (string | undefined)[] = [];
  #webhooks: string[] = [];
  #status = new Uint8Array(1024);
  #attempts = new Uint32Array(1024);
  #last = new Float64Array(1024);
  #next = new Float64Array(1024);
  #firstLine = new Float64Array(1024);
  #free: number[] = [];

  /**
   * An empty table using the given retry schedule; with `onFinal`, a
   * notification that reaches COMPLETED or FAILED goes there and is forgotten.
   */
  constructor(retry: RetryConfig, onFinal?: OnFinal) {
    this.#retry = retry;
    this.#onFinal = onFinal ?? null;
  }

  /** Number of notifications kept (with `onFinal`: those in progress). */
  get size(): number {
    return this.#ids.length - this.#free.length;
  }

  /** Applies one (not suppressed) attempt of a notification. */
  attempt(
    webhookId: string,
    notificationId: string,
    outcome: AttemptOutcome,
    time: number,
    line = 0,
  ): void {
    let byId = this.#index.get(webhookId);
    if (byId === undefined) this.#index.set(webhookId, byId = new Map());
    let i = byId.get(notificationId);
    let before: NotificationProgress;
    if (i === undefined) {
      i = this.#free.pop() ?? this.#ids.length; // a free slot, or a new one at the end
      if (i === this.#status.length) this.#grow();
      this.#ids[i] = notificationId;
      this.#webhooks[i] = webhookId;
      byId.set(notificationId, i);
      this.#firstLine[i] = line;
      before = initialProgress();
    } else before = this.#get(i);
    const after = afterAttempt(before, outcome, time, this.#retry);
    if (this.#onFinal !== null && after.status !== "IN_PROGRESS") {
      byId.delete(notificationId);
      if (byId.size === 0) this.#index.delete(webhookId);
      this.#ids[i] = undefined;
      this.#free.push(i);
      this.#onFinal({ notificationId, webhookId, progress: after }, line);
      return;
    }
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
    const grow = <T extends Uint8Array | Uint32Array | Float64Array>(a: T): T => {
      const b = new (a.constructor as new (length: number) => T)(n);
      b.set(a);
      return b;
    };
    this.#status = grow(this.#status);
    this.#attempts = grow(this.#attempts);
    this.#last = grow(this.#last);
    this.#next = grow(this.#next);
    this.#firstLine = grow(this.#firstLine);
  }

  /** The slots in use, in first-seen order. */
  #order(): number[] {
    const slots: number[] = [];
    for (let i = 0; i < this.#ids.length; i++) if (this.#ids[i] !== undefined) slots.push(i);
    // a reused slot is out of order (and without onFinal none is: then this sort finds them sorted)
    slots.sort((a, b) => this.#firstLine[a] - this.#firstLine[b]);
    return slots;
  }

  /** The notifications kept, in first-seen order (created on the fly: the table stays compact). */
  *entries(): Generator<NotificationReport> {
    for (const i of this.#order()) {
      yield { notificationId: this.#ids[i]!, webhookId: this.#webhooks[i], progress: this.#get(i) };
    }
  }
}
