/**
 * The emulator's Webhooks V2 delivery engine: endpoints, notifications,
 * real HTTP delivery, retries (breaker.md §2) and the circuit breaker (§3).
 *
 * The rules are not here: they are the shared pure functions of
 * `lib/webhooks/` ({@linkcode afterAttempt}, {@linkcode classifyOutcome},
 * {@linkcode transition}), fed with the real clock and with every duration
 * divided by `timeScale`.
 *
 * Scheduling: one timer over a min-heap of due times (no polling). Each
 * endpoint has a FIFO of due notifications and at most `concurrency`
 * attempts in flight, so a slow endpoint only ever occupies its own slots.
 *
 * Durability: every state change is one SQLite transaction, committed before
 * the caller is answered. An attempt is written when its outcome is known;
 * an attempt cut by a crash leaves its notification due, so it is made again
 * after a restart (at-least-once).
 *
 * @module
 */

import {
  afterAttempt,
  type AttemptOutcome,
  type BreakerConfig,
  type BreakerState,
  classifyOutcome,
  DEFAULT_BREAKER_CONFIG,
  DEFAULT_RETRY_CONFIG,
  restoreBreakerState,
  type RetryConfig,
  transition,
  windowErrorRate,
} from "../../webhooks/mod.ts";
import { type AttemptRecord, deliverOnce } from "./delivery.ts";
import { SIGNATURE_HEADER, type WebhookSigner } from "./signing/signer.ts";
import type {
  JobRow,
  NotificationRow,
  NotificationStatusV2,
  WebhookRow,
  WebhookStatus,
  WebhookStore,
} from "./store.ts";

/** An event that produces notifications. */
export interface WebhookEvent {
  /** e.g. `transaction.created`. */
  eventType: string;
  /** The resource's id (e.g. the transaction id), or none. */
  resourceId?: string | null;
  /** The resource as the API shows it; `{}` when absent. */
  data?: unknown;
}

/** Options of {@linkcode WebhookEngine}. */
export interface WebhookEngineOptions {
  /** The tables. */
  store: WebhookStore;
  /** The signing key. */
  signer: WebhookSigner;
  /** Divides every retry delay and breaker duration. Default 1. */
  timeScale?: number;
  /** HTTP timeout of one attempt in ms (not scaled). Default 10 000. */
  deliveryTimeoutMs?: number;
  /** Attempts in flight per endpoint. Default 8. */
  concurrency?: number;
  /** The breaker's parameters before scaling. Default breaker.md's. */
  breaker?: BreakerConfig;
  /** The retry schedule before scaling. Default breaker.md's. */
  retry?: RetryConfig;
  /** The workspace id put in every payload. */
  workspaceId?: string;
  /** E-mail addresses of the workspace's admins (told of each suspension). */
  admins?: () => string[];
  /** A log line to standard error. */
  log?: (line: string) => void;
  /** Clock; default Date.now. */
  now?: () => number;
  /** fetch used for delivery; default the global one. */
  fetch?: typeof fetch;
}

/** An API-level error: HTTP status + message. */
export class WebhookApiError extends Error {
  /** HTTP status to answer with. */
  readonly status: number;
  /** Numeric error code in the body. */
  readonly code: number;
  /** Creates an error answered as `{message, code}` with `status`. */
  constructor(status: number, message: string, code = status === 404 ? 1003 : 1000) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

interface Endpoint {
  row: WebhookRow;
  breaker: BreakerState;
  inFlight: number;
  ready: number[];
  readyHead: number;
  /** Last time given to transition (events must not go back in time). */
  lastEvalT: number;
}

interface HeapEntry {
  due: number;
  seq: number;
  gen: number;
  webhookId: string;
}

const DAY = 86_400_000;

/** The delivery engine; see the module doc. */
export class WebhookEngine {
  /** The tables. */
  readonly store: WebhookStore;
  /** The signing key. */
  readonly signer: WebhookSigner;
  /** The retry schedule in force (delays already divided by timeScale). */
  readonly retryCfg: RetryConfig;
  /** The breaker in force (durations already divided by timeScale). */
  readonly breakerCfg: BreakerConfig;
  /** HTTP timeout of one attempt, ms. */
  readonly deliveryTimeoutMs: number;
  /** Attempts in flight per endpoint. */
  readonly concurrency: number;
  /** Put in every payload. */
  readonly workspaceId: string;
  #admins: () => string[];
  #log: (line: string) => void;
  #now: () => number;
  #fetch?: typeof fetch;
  #endpoints = new Map<string, Endpoint>();
  #heap: HeapEntry[] = [];
  /** seq → generation of its one valid heap entry. */
  #scheduled = new Map<number, number>();
  #gen = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerDue = Infinity;
  #abort = new AbortController();
  #inflight = new Set<Promise<void>>();
  #bodies = new Map<number, { series: number; body: string; sig: string }>();
  /** Notifications with an attempt on the wire: never two at once for one notification. */
  #onWire = new Set<number>();
  #stopped = false;
  #jobsRunning = new Set<string>();
  /** Called after each recorded attempt (tests, console). */
  onAttempt?: (n: NotificationRow, a: AttemptRecord) => void;

  /** Builds the engine; call {@linkcode WebhookEngine.start} to load and schedule. */
  constructor(opts: WebhookEngineOptions) {
    const scale = opts.timeScale ?? 1;
    if (!(scale > 0)) throw new RangeError(`timeScale must be above 0, got ${scale}.`);
    this.store = opts.store;
    this.signer = opts.signer;
    const r = opts.retry ?? DEFAULT_RETRY_CONFIG;
    this.retryCfg = { ...r, delaysMs: r.delaysMs.map((d) => d / scale) };
    const b = opts.breaker ?? DEFAULT_BREAKER_CONFIG;
    this.breakerCfg = {
      ...b,
      windowMs: b.windowMs / scale,
      sustainedForMs: b.sustainedForMs / scale,
      bandResetsAfterIdleMs: b.bandResetsAfterIdleMs === null
        ? null
        : b.bandResetsAfterIdleMs / scale,
    };
    this.deliveryTimeoutMs = opts.deliveryTimeoutMs ?? 10_000;
    this.concurrency = opts.concurrency ?? 8;
    this.workspaceId = opts.workspaceId ?? "emulator-workspace";
    this.#admins = opts.admins ?? (() => ["admin@emulator.local"]);
    this.#log = opts.log ?? (() => {});
    this.#now = opts.now ?? Date.now;
    this.#fetch = opts.fetch;
  }

  // ------------------------------------------------------------ lifecycle

  /** Loads endpoints (rebuilding each breaker from stored attempts), pending notifications and unfinished jobs. */
  start(): void {
    for (const row of this.store.allWebhooks()) this.#endpoints.set(row.id, this.#load(row));
    const now = this.#now();
    for (const n of this.store.pendingNotifications()) {
      if (n.status === "IN_PROGRESS") this.#schedule(n.seq, n.webhookId, n.nextAttemptAt ?? now);
    }
    for (const j of this.store.unfinishedJobs()) this.#runJob(j);
  }

  /** Stops the timer and aborts attempts in flight (they are not recorded, so they are made again after a restart). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#abort.abort(new DOMException("emulator stopping", "AbortError"));
    await Promise.allSettled([...this.#inflight]);
  }

  #load(row: WebhookRow): Endpoint {
    const since = (row.lastAttemptAt ?? 0) - this.breakerCfg.windowMs;
    const window: [number, 0 | 1][] = row.status === "SUSPENDED"
      ? []
      : this.store.windowAttempts(row.id, row.breakerResetSeq, since).map((a) => [
        a.sentTime,
        a.error ? 1 : 0,
      ]);
    const breaker = restoreBreakerState({
      status: row.status === "SUSPENDED" ? "SUSPENDED" : "ENABLED",
      window,
      bandSince: row.bandSince,
      lastAttemptAt: row.lastAttemptAt,
    });
    return {
      row,
      breaker,
      inFlight: 0,
      ready: [],
      readyHead: 0,
      lastEvalT: row.lastAttemptAt ?? -Infinity,
    };
  }

  // ------------------------------------------------------------ endpoints

  /** Creates an endpoint. */
  createWebhook(
    input: { url: string; events: string[]; description?: string; enabled?: boolean },
  ): WebhookRow {
    const now = this.#now();
    const row = this.store.insertWebhook({
      id: crypto.randomUUID(),
      url: input.url,
      events: input.events,
      description: input.description ?? null,
      status: input.enabled === false ? "DISABLED" : "ENABLED",
      createdAt: now,
      updatedAt: now,
    });
    this.#endpoints.set(row.id, this.#load(row));
    return row;
  }

  /** An endpoint or a 404. */
  webhook(id: string): WebhookRow {
    const ep = this.#endpoints.get(id);
    if (!ep) throw new WebhookApiError(404, `Webhook ${JSON.stringify(id)} not found.`, 1003);
    return ep.row;
  }

  /** Every endpoint, in creation order. */
  webhooks(): WebhookRow[] {
    return [...this.#endpoints.values()].map((e) => e.row);
  }

  /**
   * Updates an endpoint. `enabled: true` re-enables a SUSPENDED (or
   * DISABLED) one at once, with an empty window and no band (breaker.md §3);
   * its waiting notifications resume. `enabled: false` disables it.
   */
  updateWebhook(
    id: string,
    patch: { url?: string; description?: string; events?: string[]; enabled?: boolean },
  ): WebhookRow {
    const ep = this.#endpoints.get(id);
    if (!ep) throw new WebhookApiError(404, `Webhook ${JSON.stringify(id)} not found.`, 1003);
    const now = this.#now();
    const row = { ...ep.row };
    if (patch.url !== undefined) row.url = patch.url;
    if (patch.description !== undefined) row.description = patch.description;
    if (patch.events !== undefined) row.events = patch.events;
    row.updatedAt = now;
    let resume = false;
    this.store.tx(() => {
      if (patch.enabled === true && row.status !== "ENABLED") {
        if (ep.breaker.status === "SUSPENDED") {
          transition(ep.breaker, { type: "enable", time: now }, this.breakerCfg);
          row.breakerResetSeq = this.store.maxAttemptSeq();
          row.bandSince = null;
        }
        row.status = "ENABLED";
        resume = true;
        this.store.stmt(
          `UPDATE wh_notifications SET status = 'IN_PROGRESS', updated_at = ?,
           next_attempt_at = MAX(COALESCE(next_attempt_at, ?), ?)
           WHERE webhook_id = ? AND status = 'ON_HOLD'`,
        ).run(now, now, now, id);
      } else if (patch.enabled === false && row.status !== "DISABLED") {
        row.status = "DISABLED";
        this.#holdAll(id, now);
      }
      this.store.updateWebhook(row);
    });
    ep.row = row;
    if (resume) {
      for (const n of this.store.pendingNotifications(id)) {
        if (n.status === "IN_PROGRESS") this.#schedule(n.seq, id, n.nextAttemptAt ?? now);
      }
    }
    return row;
  }

  /** Deletes an endpoint; its waiting notifications are no longer delivered. */
  deleteWebhook(id: string): WebhookRow {
    const row = this.webhook(id);
    const now = this.#now();
    this.store.tx(() => {
      this.store.deleteWebhook(id, now);
      this.#holdAll(id, now);
    });
    this.#endpoints.delete(id);
    return row;
  }

  /** Moves an endpoint's IN_PROGRESS notifications to ON_HOLD and forgets their schedule. */
  #holdAll(webhookId: string, now: number): void {
    this.store.stmt(
      `UPDATE wh_notifications SET status = 'ON_HOLD', updated_at = ?
       WHERE webhook_id = ? AND status = 'IN_PROGRESS'`,
    ).run(now, webhookId);
    const ep = this.#endpoints.get(webhookId);
    if (ep) {
      for (let i = ep.readyHead; i < ep.ready.length; i++) this.#scheduled.delete(ep.ready[i]);
      ep.ready = [];
      ep.readyHead = 0;
    }
    // heap entries of this endpoint become stale: their seq is no longer in #scheduled
    for (const e of this.#heap) if (e.webhookId === webhookId) this.#scheduled.delete(e.seq);
  }

  /**
   * The error rate of the endpoint's last active hour (scaled): over
   * (L - W, L] where L is its latest attempt, in whole percent, as the
   * platform's `LAST_ACTIVE_HOUR_ERROR_RATE` metric.
   */
  errorRatePercent(id: string): string {
    this.webhook(id);
    const last = this.store.lastAttemptTime(id);
    if (last === null) return "0";
    const W = this.breakerCfg.windowMs;
    const rows = this.store.attemptsBetween(id, last - W, last);
    const state = restoreBreakerState({
      status: "ENABLED",
      window: rows.map((a) => [a.sentTime, a.error ? 1 : 0]),
      bandSince: null,
      lastAttemptAt: null,
    });
    const { rate } = windowErrorRate(state, last, this.breakerCfg);
    return String(Math.round(rate * 100));
  }

  // ------------------------------------------------------------ notifications

  /**
   * Creates one notification per endpoint (ENABLED or SUSPENDED) subscribed
   * to the event, committed before it returns. Suspended endpoints' wait ON_HOLD.
   */
  publish(event: WebhookEvent): { id: string; webhookId: string }[] {
    return this.publishMany([event]);
  }

  /** {@linkcode WebhookEngine.publish} for many events in one transaction. */
  publishMany(events: WebhookEvent[]): { id: string; webhookId: string }[] {
    const now = this.#now();
    const out: { id: string; webhookId: string; seq: number; status: NotificationStatusV2 }[] = [];
    const targets = [...this.#endpoints.values()].filter((e) =>
      e.row.status === "ENABLED" || e.row.status === "SUSPENDED"
    );
    this.store.tx(() => {
      for (const ev of events) {
        const data = JSON.stringify(ev.data ?? {});
        for (const ep of targets) {
          if (!ep.row.events.includes(ev.eventType)) continue;
          const id = crypto.randomUUID();
          const status = ep.row.status === "ENABLED" ? "IN_PROGRESS" : "ON_HOLD";
          const seq = this.store.insertNotification({
            id,
            webhookId: ep.row.id,
            eventType: ev.eventType,
            resourceId: ev.resourceId ?? null,
            data,
            status,
            createdAt: now,
            updatedAt: now,
            attempts: 0,
            lastSentTime: null,
            nextAttemptAt: now,
          });
          out.push({ id, webhookId: ep.row.id, seq, status });
        }
      }
    });
    for (const o of out) if (o.status === "IN_PROGRESS") this.#schedule(o.seq, o.webhookId, now);
    return out.map(({ id, webhookId }) => ({ id, webhookId }));
  }

  /** A notification or a 404. */
  notification(webhookId: string, id: string): NotificationRow {
    this.webhook(webhookId);
    const n = this.store.getNotification(webhookId, id);
    if (!n) {
      throw new WebhookApiError(404, `Notification ${JSON.stringify(id)} not found.`, 1003);
    }
    return n;
  }

  /** Starts a fresh series of attempts for one notification (no age limit here; the API checks 30 days). */
  #resendRow(n: NotificationRow, now: number): NotificationRow {
    const ep = this.#endpoints.get(n.webhookId);
    const status: NotificationStatusV2 = ep?.row.status === "ENABLED" ? "IN_PROGRESS" : "ON_HOLD";
    const next: NotificationRow = {
      ...n,
      status,
      attempts: 0,
      lastSentTime: null,
      nextAttemptAt: now,
      updatedAt: now,
      series: n.series + 1,
    };
    this.store.updateNotificationProgress(next);
    return next;
  }

  /** Resends one notification (202). */
  resend(webhookId: string, id: string): void {
    const n = this.notification(webhookId, id);
    const now = this.#now();
    if (n.createdAt < now - 30 * DAY) {
      throw new WebhookApiError(
        400,
        `Notification ${id} is older than 30 days and cannot be resent.`,
        1000,
      );
    }
    const next = this.store.tx(() => this.#resendRow(n, now));
    if (next.status === "IN_PROGRESS") this.#schedule(next.seq, webhookId, now);
  }

  /**
   * Resends the endpoint's notifications of a resource from the last 30 days.
   * `excludeStatuses` absent: every status but COMPLETED; `[]`: all.
   */
  resendByResource(webhookId: string, resourceId: string, excludeStatuses?: string[]): number {
    this.webhook(webhookId);
    const now = this.#now();
    const exclude = new Set(excludeStatuses ?? ["COMPLETED"]);
    const rows = this.store.stmt(
      `SELECT * FROM wh_notifications WHERE webhook_id = ? AND resource_id = ? AND created_at >= ?`,
    ).all(webhookId, resourceId, now - 30 * DAY) as Record<string, unknown>[];
    const chosen = rows.filter((r) => !exclude.has(r.status as string));
    const done = this.store.tx(() =>
      chosen.map((r) => this.#resendRow(this.store.notificationBySeq(r.seq as number)!, now))
    );
    for (const n of done) if (n.status === "IN_PROGRESS") this.#schedule(n.seq, webhookId, now);
    return done.length;
  }

  /**
   * Resends the endpoint's FAILED notifications of the last 24 hours
   * (from `startTime` when later), optionally of some event types. Returns
   * `{total: 0}` when there is nothing, else a job (processed in the
   * background, batch by batch, and resumed after a restart).
   */
  resendFailed(
    webhookId: string,
    opts: { startTime?: number; events?: string[] },
  ): { total: number; job?: JobRow } {
    this.webhook(webhookId);
    const now = this.#now();
    const since = Math.max(opts.startTime ?? 0, now - DAY);
    let rows = this.store.stmt(
      `SELECT seq, event_type FROM wh_notifications WHERE webhook_id = ? AND status = 'FAILED'
       AND created_at >= ? ORDER BY seq`,
    ).all(webhookId, since) as { seq: number; event_type: string }[];
    if (opts.events?.length) {
      const ev = new Set(opts.events);
      rows = rows.filter((r) => ev.has(r.event_type));
    }
    if (rows.length === 0) return { total: 0 };
    const job: JobRow = {
      id: crypto.randomUUID(),
      webhookId,
      status: "QUEUED",
      processed: 0,
      total: rows.length,
      pending: rows.map((r) => r.seq),
      createdAt: now,
    };
    this.store.saveJob(job);
    this.#runJob(job);
    return { total: job.total, job };
  }

  /** A resend job or a 404. */
  job(webhookId: string, jobId: string): JobRow {
    this.webhook(webhookId);
    const j = this.store.getJob(webhookId, jobId);
    if (!j) throw new WebhookApiError(404, `Job ${JSON.stringify(jobId)} not found.`, 1003);
    return j;
  }

  #runJob(job: JobRow): void {
    if (this.#jobsRunning.has(job.id)) return;
    this.#jobsRunning.add(job.id);
    const BATCH = 200;
    const step = () => {
      if (this.#stopped) return;
      const now = this.#now();
      const batch = job.pending.splice(0, BATCH);
      const done = this.store.tx(() => {
        const out: NotificationRow[] = [];
        for (const seq of batch) {
          const n = this.store.notificationBySeq(seq);
          if (n && n.status === "FAILED") out.push(this.#resendRow(n, now));
        }
        job.processed += batch.length;
        job.status = job.pending.length ? "IN_PROGRESS" : "COMPLETED";
        this.store.saveJob(job);
        return out;
      });
      for (const n of done) if (n.status === "IN_PROGRESS") this.#schedule(n.seq, n.webhookId, now);
      if (job.pending.length) setTimeout(step, 0);
      else this.#jobsRunning.delete(job.id);
    };
    setTimeout(step, 0);
  }

  // ------------------------------------------------------------ scheduling

  #schedule(seq: number, webhookId: string, due: number): void {
    if (this.#stopped) return;
    const gen = ++this.#gen;
    this.#scheduled.set(seq, gen);
    heapPush(this.#heap, { due, seq, gen, webhookId });
    this.#arm();
  }

  #arm(): void {
    const top = this.#heap[0];
    if (!top || this.#stopped) return;
    if (this.#timer !== undefined && this.#timerDue <= top.due) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerDue = top.due;
    this.#timer = setTimeout(() => this.#tick(), Math.max(0, top.due - this.#now()));
  }

  #tick(): void {
    this.#timer = undefined;
    this.#timerDue = Infinity;
    const now = this.#now();
    const touched = new Set<Endpoint>();
    while (this.#heap.length && this.#heap[0].due <= now) {
      const e = heapPop(this.#heap)!;
      if (this.#scheduled.get(e.seq) !== e.gen) continue; // stale
      const ep = this.#endpoints.get(e.webhookId);
      if (!ep || ep.row.status !== "ENABLED") {
        this.#scheduled.delete(e.seq);
        continue;
      }
      ep.ready.push(e.seq);
      touched.add(ep);
    }
    for (const ep of touched) this.#pump(ep);
    this.#arm();
  }

  #pump(ep: Endpoint): void {
    while (
      ep.inFlight < this.concurrency && ep.readyHead < ep.ready.length && !this.#stopped &&
      ep.row.status === "ENABLED"
    ) {
      const seq = ep.ready[ep.readyHead++];
      const gen = this.#scheduled.get(seq);
      if (gen === undefined) continue; // cancelled while queued
      this.#scheduled.delete(seq);
      // already on the wire (re-enabled or resent meanwhile): its completion schedules what follows
      if (this.#onWire.has(seq)) continue;
      this.#onWire.add(seq);
      ep.inFlight++;
      const p = this.#attempt(ep, seq).catch((e) => {
        if (!this.#stopped) this.#log(`webhook delivery error: ${e?.message ?? e}`);
      }).finally(() => {
        this.#onWire.delete(seq);
        ep.inFlight--;
        this.#inflight.delete(p);
        this.#pump(ep);
      });
      this.#inflight.add(p);
    }
    if (ep.readyHead >= ep.ready.length) {
      ep.ready = [];
      ep.readyHead = 0;
    } else if (ep.readyHead > 1024) {
      ep.ready = ep.ready.slice(ep.readyHead);
      ep.readyHead = 0;
    }
  }

  #payload(n: NotificationRow): string {
    return `{"id":${JSON.stringify(n.id)},"eventType":${JSON.stringify(n.eventType)},` +
      `"resourceId":${JSON.stringify(n.resourceId)},"data":${n.data},` +
      `"createdAt":${n.createdAt},"workspaceId":${JSON.stringify(this.workspaceId)},` +
      `"webhookId":${JSON.stringify(n.webhookId)}}`;
  }

  async #attempt(ep: Endpoint, seq: number): Promise<void> {
    const n = this.store.notificationBySeq(seq);
    if (!n || n.status !== "IN_PROGRESS") return;
    let signed = this.#bodies.get(seq);
    if (!signed || signed.series !== n.series) {
      const body = this.#payload(n);
      signed = { series: n.series, body, sig: await this.signer.sign(body) };
      this.#bodies.set(seq, signed);
    }
    const rec = await deliverOnce({
      url: ep.row.url,
      body: signed.body,
      headers: { [SIGNATURE_HEADER]: signed.sig },
      timeoutMs: this.deliveryTimeoutMs,
      signal: this.#abort.signal,
      fetch: this.#fetch,
      now: this.#now,
    });
    if (this.#stopped) return; // not recorded: made again after a restart
    this.#record(ep, n, rec);
  }

  /** Records one attempt, moves the notification and the breaker, in one transaction. */
  #record(ep: Endpoint, started: NotificationRow, rec: AttemptRecord): void {
    const outcome: AttemptOutcome = rec.responseCode !== undefined
      ? { responseCode: rec.responseCode }
      : { failureReason: rec.failureReason! };
    const cls = classifyOutcome(outcome);
    const now = this.#now();
    let suspended: ReturnType<typeof transition>["effect"] = null;
    let updated: NotificationRow | undefined;
    let resent: NotificationRow | undefined;
    const live = this.#endpoints.get(started.webhookId) === ep;
    this.store.tx(() => {
      const evaluate = live && ep.breaker.status === "ENABLED";
      const attemptSeq = this.store.insertAttempt({
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
        // Attempts finish out of order when several are in flight; the rules
        // need non-decreasing times per endpoint, so a late finisher is
        // evaluated at the latest time already seen.
        const t = Math.max(rec.sentTime, ep.lastEvalT);
        ep.lastEvalT = t;
        const bandBefore = ep.breaker.bandSince;
        const { effect } = transition(
          ep.breaker,
          { type: "attempt", time: t, error: cls.error },
          this.breakerCfg,
        );
        if (effect?.type === "suspended") {
          suspended = effect;
          ep.row = {
            ...ep.row,
            status: "SUSPENDED",
            updatedAt: now,
            bandSince: null,
            lastAttemptAt: t,
            breakerResetSeq: attemptSeq,
          };
          this.store.updateWebhook(ep.row);
          this.#holdAll(ep.row.id, now);
          this.#mail(ep.row, effect, now);
        } else if (bandBefore !== ep.breaker.bandSince || ep.row.lastAttemptAt !== t) {
          ep.row = { ...ep.row, bandSince: ep.breaker.bandSince, lastAttemptAt: t };
          this.store.updateBreaker(ep.row.id, ep.row.bandSince, t);
        }
      }
      const cur = this.store.notificationBySeq(started.seq);
      if (!cur) return;
      if (cur.series !== started.series) {
        // resent meanwhile: this attempt counted for the breaker; the new series goes on
        resent = cur;
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
        this.retryCfg,
      );
      let status: NotificationStatusV2 = p.status;
      const endpointStatus: WebhookStatus | undefined = live ? ep.row.status : undefined;
      if (status === "IN_PROGRESS" && endpointStatus !== "ENABLED") status = "ON_HOLD";
      updated = {
        ...cur,
        status,
        attempts: p.attempts,
        lastSentTime: p.lastSentTime,
        nextAttemptAt: p.nextAttemptAt,
        updatedAt: now,
      };
      this.store.updateNotificationProgress(updated);
    });
    if (suspended) {
      const s = suspended as { reason: string; errors: number; attempts: number; time: number };
      this.#log(
        `webhook ${ep.row.id} SUSPENDED (${s.reason}) at ${
          new Date(s.time).toISOString()
        }: ${s.errors} errors in ${s.attempts} attempts of the window; e-mailed ${this.#admins().length} admin(s)`,
      );
    }
    if (resent?.status === "IN_PROGRESS") {
      this.#schedule(resent.seq, resent.webhookId, resent.nextAttemptAt ?? now);
    }
    if (updated) {
      if (updated.status === "IN_PROGRESS") {
        this.#schedule(updated.seq, updated.webhookId, updated.nextAttemptAt!);
      } else if (updated.status !== "ON_HOLD") this.#bodies.delete(updated.seq);
      this.onAttempt?.(updated, rec);
    }
  }

  #mail(
    row: WebhookRow,
    effect: { reason: string; errorRate: number; errors: number; attempts: number },
    now: number,
  ): void {
    const pct = Math.round(effect.errorRate * 100);
    for (const to of this.#admins()) {
      this.store.insertMail({
        webhookId: row.id,
        to,
        subject: `Webhook endpoint suspended: ${row.url}`,
        body: [
          `Your webhook endpoint ${row.url} (id ${row.id}) was suspended at ${
            new Date(now).toISOString()
          }.`,
          `Reason: ${
            effect.reason === "immediate"
              ? "error rate above 80%"
              : "error rate at or above 50% for 4 hours"
          } ` +
          `(${effect.errors} of ${effect.attempts} attempts in the last hour failed, ${pct}%).`,
          `No notifications are sent to it while it is suspended; they wait ON_HOLD.`,
          `Re-enable it in the console or with PATCH /v1/webhooks/${row.id} {"enabled": true}.`,
        ].join("\n"),
        createdAt: now,
      });
    }
  }
}

// ---- a small binary min-heap on (due, gen)

function less(a: HeapEntry, b: HeapEntry): boolean {
  return a.due < b.due || (a.due === b.due && a.gen < b.gen);
}

function heapPush(h: HeapEntry[], e: HeapEntry): void {
  h.push(e);
  let i = h.length - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!less(h[i], h[p])) break;
    [h[i], h[p]] = [h[p], h[i]];
    i = p;
  }
}

function heapPop(h: HeapEntry[]): HeapEntry | undefined {
  const top = h[0];
  const last = h.pop();
  if (h.length && last) {
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && less(h[l], h[m])) m = l;
      if (r < h.length && less(h[r], h[m])) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m], h[i]];
      i = m;
    }
  }
  return top;
}
