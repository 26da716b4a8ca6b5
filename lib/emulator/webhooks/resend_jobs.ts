/**
 * Resends: one notification, the notifications of a resource, every
 * notification of the last 24 hours (the console's "Resend notifications"),
 * and the jobs of "resend failed" and "resend by query" (processed in the
 * background, batch by batch, resumed after a restart). A resend starts a fresh series of up to 10
 * attempts (breaker.md §2, our choice); it waits ON_HOLD when the endpoint
 * is not ENABLED.
 *
 * @module
 */

import {
  BadRequestError,
  NotFoundError,
  NOTIFICATION_STATUSES,
  type NotificationStatus,
} from "../../core/mod.ts";
import type { Endpoints } from "./endpoints.ts";
import type { Clock, Scheduler } from "./scheduler.ts";
import type { WebhookStore } from "./store.ts";
import type { JobRow, NotificationRow } from "./rows.ts";
import { waitingStatus } from "../../webhooks/mod.ts";
import type { ResendQuery } from "../../platform/webhooks.ts";

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** Notifications resent per step of a job. */
const BATCH = 200;

/** Options of {@linkcode Resends}. */
export interface ResendsOptions {
  /** The tables. */
  store: WebhookStore;
  /** The live endpoints. */
  endpoints: Endpoints;
  /** The due-time queue. */
  scheduler: Scheduler;
  /** Clock and timers (a job's steps are timers of 0 ms). */
  clock: Clock;
}

/**
 * The resend operations; see the module doc.
 *
 * @example
 * ```ts
 * import type { Endpoints } from "./endpoints.ts";
 * import type { Clock, Scheduler } from "./scheduler.ts";
 * import type { WebhookStore } from "./store.ts";
 * declare const store: WebhookStore, endpoints: Endpoints, scheduler: Scheduler, clock: Clock;
 * const resends = new Resends({ store, endpoints, scheduler, clock });
 * resends.resend("w1", "n1");
 * ```
 */
export class Resends {
  readonly #o: ResendsOptions;
  readonly #running = new Set<string>();
  #stopped = false;

  /** Builds the resend operations over the engine's parts. */
  constructor(opts: ResendsOptions) {
    this.#o = opts;
  }

  /** Resumes the jobs a previous run left unfinished. */
  resume(): void {
    for (const j of this.#o.store.unfinishedJobs()) this.#run(j);
  }

  /** Stops running jobs (they resume after a restart). */
  stop(): void {
    this.#stopped = true;
  }

  /** A notification of an endpoint, or a 404. */
  notification(webhookId: string, id: string): NotificationRow {
    this.#o.endpoints.row(webhookId);
    const n = this.#o.store.getNotification(webhookId, id);
    if (!n) {
      throw new NotFoundError(`Notification ${JSON.stringify(id)} not found.`);
    }
    return n;
  }

  /** Starts a fresh series of attempts for one notification (no age limit here). */
  #fresh(n: NotificationRow, now: number): NotificationRow {
    const ep = this.#o.endpoints.get(n.webhookId);
    const status = waitingStatus("IN_PROGRESS", ep?.row.status);
    const next: NotificationRow = {
      ...n,
      status,
      attempts: 0,
      lastSentTime: null,
      nextAttemptAt: now,
      updatedAt: now,
      series: n.series + 1,
    };
    this.#o.store.updateNotificationProgress(next);
    return next;
  }

  /** A fresh series for each notification `rows()` reads, in one transaction; how many. */
  #resendAll(rows: () => NotificationRow[], now: number): number {
    const done = this.#o.store.tx(() => rows().map((n) => this.#fresh(n, now)));
    this.#scheduleAll(done, now);
    return done.length;
  }

  #scheduleAll(rows: NotificationRow[], now: number): void {
    for (const n of rows) {
      if (n.status === "IN_PROGRESS") this.#o.scheduler.schedule(n.seq, n.webhookId, now);
    }
  }

  /** Resends one notification (the API answers 202); 400 when it is older than 30 days. */
  resend(webhookId: string, id: string): void {
    const n = this.notification(webhookId, id);
    const now = this.#o.clock.now();
    if (n.createdAt < now - 30 * DAY) {
      throw new BadRequestError(`Notification ${id} is older than 30 days and cannot be resent.`);
    }
    this.#resendAll(() => [n], now);
  }

  /**
   * Resends the endpoint's notifications of a resource from the last 30 days.
   * `excludeStatuses` absent: every status but COMPLETED; `[]`: all.
   * `events`, when given (not empty): only those event types.
   */
  resendByResource(
    webhookId: string,
    resourceId: string,
    excludeStatuses?: string[],
    events?: readonly string[],
  ): number {
    this.#o.endpoints.row(webhookId);
    const now = this.#o.clock.now();
    const exclude = excludeStatuses ?? ["COMPLETED"];
    const statuses = NOTIFICATION_STATUSES.filter((s) => !exclude.includes(s));
    if (statuses.length === 0) return 0; // every status excluded (an empty filter is all)
    const seqs = this.#o.store.notificationSeqs({
      webhookId,
      startTime: now - 30 * DAY,
      statuses,
      events,
      resourceId,
    });
    return this.#resendAll(() => this.#o.store.notifications(seqs), now);
  }

  /**
   * The console's "Resend notifications": every notification of the
   * endpoint created in the last 24 hours, whatever its status, starts a
   * fresh series (one transaction). Through the API a client asks the same
   * with resend by query (every status, the last 24 hours). Returns how
   * many were resent; `dryRun` only counts them.
   */
  resendRecent(webhookId: string, opts: { dryRun?: boolean } = {}): number {
    this.#o.endpoints.row(webhookId);
    const now = this.#o.clock.now();
    const seqs = this.#o.store.notificationSeqs({ webhookId, startTime: now - DAY });
    if (opts.dryRun) return seqs.length;
    return this.#resendAll(() => this.#o.store.notifications(seqs), now);
  }

  /**
   * Resends the endpoint's FAILED notifications of the last 24 hours
   * (from `startTime` when later), optionally of some event types. Returns
   * `{total: 0}` when there is nothing, else a job. A `startTime` more than
   * 24 hours ago or in the future is refused (400), as the SDK's
   * `ResendFailedNotificationsRequest` bounds it (resend by query refuses
   * its own bounds alike).
   */
  resendFailed(
    webhookId: string,
    opts: { startTime?: number; events?: string[] },
  ): { total: number; job?: JobRow } {
    this.#o.endpoints.row(webhookId);
    const now = this.#o.clock.now();
    const start = opts.startTime;
    if (start !== undefined && (start < now - DAY || start > now)) {
      throw new BadRequestError(
        `startTime ${start} is outside the last 24 hours (${now - DAY} to ${now}); ` +
          "resend failed reaches back 24 hours at most (use resend by query for up to 72).",
      );
    }
    const statuses: NotificationStatus[] = ["FAILED"];
    const seqs = this.#o.store.notificationSeqs({
      webhookId,
      startTime: start ?? now - DAY,
      statuses,
      events: opts.events,
    });
    return this.#startJob(webhookId, "failed", statuses, seqs, now);
  }

  /**
   * Resend by query, as the SDK's `ResendByQueryRequest` documents it:
   * `statuses` default FAILED and ON_HOLD; `startTime` default 24 hours
   * ago, no earlier than 72 hours ago and not in the future; `endTime`
   * (needs `startTime`) default now, after `startTime`, at most 24 hours
   * after it; `events` absent or empty: every event; `resourceId` filters.
   * Returns `{total: 0}` when nothing matches, else a job.
   */
  resendByQuery(
    webhookId: string,
    q: ResendQuery & { statuses?: NotificationStatus[] },
  ): { total: number; job?: JobRow } {
    this.#o.endpoints.row(webhookId);
    const now = this.#o.clock.now();
    if (q.endTime !== undefined && q.startTime === undefined) {
      throw new BadRequestError(
        "endTime needs startTime: give both, or neither (the last 24 hours).",
      );
    }
    const startTime = q.startTime ?? now - DAY;
    const endTime = q.endTime ?? now;
    if (startTime < now - 72 * HOUR || startTime > now) {
      throw new BadRequestError(
        `startTime ${startTime} is outside the last 72 hours (${now - 72 * HOUR} to ${now}); ` +
          "resend by query reaches back 72 hours at most.",
      );
    }
    if (endTime <= startTime) {
      throw new BadRequestError(`endTime ${endTime} must be after startTime ${startTime}.`);
    }
    if (endTime - startTime > DAY) {
      throw new BadRequestError(
        `The window from startTime to endTime is ${
          ((endTime - startTime) / HOUR).toFixed(1)
        } hours; resend by query takes at most 24 hours: split it into several calls.`,
      );
    }
    const statuses = q.statuses?.length
      ? q.statuses
      : ["FAILED", "ON_HOLD"] as NotificationStatus[];
    const seqs = this.#o.store.notificationSeqs({ ...q, webhookId, startTime, endTime, statuses });
    return this.#startJob(webhookId, "query", statuses, seqs, now);
  }

  #startJob(
    webhookId: string,
    kind: JobRow["kind"],
    statuses: NotificationStatus[],
    seqs: number[],
    now: number,
  ): { total: number; job?: JobRow } {
    if (seqs.length === 0) return { total: 0 };
    const job: JobRow = {
      id: crypto.randomUUID(),
      webhookId,
      kind,
      statuses,
      status: "QUEUED",
      processed: 0,
      total: seqs.length,
      pending: seqs,
      createdAt: now,
    };
    this.#o.store.saveJob(job);
    this.#run(job);
    return { total: job.total, job };
  }

  /** A resend job of an endpoint made by the call `kind`, or a 404. */
  job(webhookId: string, jobId: string, kind: JobRow["kind"]): JobRow {
    this.#o.endpoints.row(webhookId);
    const j = this.#o.store.getJob(webhookId, jobId, kind);
    if (!j) {
      throw new NotFoundError(
        `Job ${JSON.stringify(jobId)} not found among the ${
          kind === "query" ? "resend by query" : "resend failed"
        } jobs of webhook ${webhookId}.`,
      );
    }
    return j;
  }

  #run(job: JobRow): void {
    if (this.#running.has(job.id)) return;
    this.#running.add(job.id);
    const step = () => {
      if (this.#stopped) return;
      const now = this.#o.clock.now();
      const batch = job.pending.splice(0, BATCH);
      const done = this.#o.store.tx(() => {
        const out: NotificationRow[] = [];
        for (const seq of batch) {
          const n = this.#o.store.notificationBySeq(seq);
          if (n && job.statuses.includes(n.status)) out.push(this.#fresh(n, now));
        }
        job.processed += batch.length;
        job.status = job.pending.length ? "IN_PROGRESS" : "COMPLETED";
        this.#o.store.saveJob(job);
        return out;
      });
      this.#scheduleAll(done, now);
      if (job.pending.length) this.#o.clock.setTimer(step, 0);
      else this.#running.delete(job.id);
    };
    this.#o.clock.setTimer(step, 0);
  }
}
