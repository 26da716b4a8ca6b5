/**
 * The emulator's webhook delivery engine: it turns events into
 * notifications and keeps every endpoint served. Its parts, one file each:
 *
 * - `endpoints.ts`: the endpoints with their breaker states (CRUD);
 * - `scheduler.ts`: when each next attempt is due (one timer, injectable clock);
 * - `delivery.ts`: one attempt over HTTP;
 * - `attempt_recorder.ts`: recording an attempt and applying the shared
 *   rules of `lib/webhooks` (retry schedule, breaker);
 * - `resend_jobs.ts`: resends and resend jobs;
 * - `store.ts`: the tables (the only SQL).
 *
 * This file is the loop between them: due notifications are queued per
 * endpoint, each endpoint has at most `concurrency` attempts in flight (so a
 * slow endpoint only ever occupies its own slots), each attempt is signed,
 * made, recorded, and its next attempt scheduled. Every duration of the
 * rules is divided by `timeScale`.
 *
 * Durability: every state change is one SQLite transaction, committed before
 * the caller is answered. An attempt is written when its outcome is known:
 * the attempts that end in the same turn of the event loop are recorded
 * together, each by its own rules, in one transaction committed at the end
 * of that turn (a group commit: one BEGIN/COMMIT for a burst of answers),
 * before anything follows from them. An attempt cut by a crash leaves its
 * notification due, so it is made again after a restart (at-least-once).
 *
 * @module
 */

import { EmulatorConfigError } from "../errors.ts";
import {
  type BreakerConfig,
  DEFAULT_BREAKER_CONFIG,
  DEFAULT_RETRY_CONFIG,
  type RetryConfig,
  waitingStatus,
} from "../../webhooks/mod.ts";
import type { NotificationStatus } from "../../core/mod.ts";
import { type AttemptRecord, DEFAULT_DELIVERY_TIMEOUT_MS, deliverOnce } from "./delivery.ts";
import { SIGNATURE_HEADER } from "./signer.ts";
import type { WebhookStore } from "./store.ts";
import type { EmulatorEvent } from "../events.ts";
import type { NotificationRow } from "./rows.ts";
import { type Endpoint, Endpoints } from "./endpoints.ts";
import { type Clock, type DueEntry, Scheduler, systemClock } from "./scheduler.ts";
import { Resends } from "./resend_jobs.ts";
import { ADMINS, type BreakerContext, recordAttempt, type Recorded } from "./attempt_recorder.ts";

/** What signs a payload: the value of the signature header for `body` (the `WebhookSigner`). */
export interface BodySigner {
  /** The signature header's value for exactly these bytes. */
  sign(body: string): Promise<string>;
}

/** Webhook delivery settings given at start (the rest comes from the emulator's own). */
export interface WebhookSettings {
  /** HTTP timeout of one attempt in ms (not scaled). Default 10 000. */
  deliveryTimeoutMs?: number;
  /** Attempts in flight per endpoint. Default 8. */
  concurrency?: number;
  /** The breaker's parameters before scaling. Default breaker.md's (§3). */
  breaker?: BreakerConfig;
}

/** Options of {@linkcode WebhookEngine}. */
export interface WebhookEngineOptions extends WebhookSettings {
  /** The tables. */
  store: WebhookStore;
  /** The signing key. */
  signer: BodySigner;
  /** Divides every retry delay and breaker duration. Default 1. */
  timeScale?: number;
  /** A log line to standard error. Default none. */
  log?: (line: string) => void;
  /** The console's address without its token, once known (named in the suspension e-mail). */
  consoleUrl?: () => string | undefined;
  /** Clock; default `Date.now`. Ignored when `clock` is given. */
  now?: () => number;
  /** Clock and timers; default real timers over `now`. Tests pass a virtual one. */
  clock?: Clock;
  /** fetch used for delivery; default the global one. */
  fetch?: typeof fetch;
}

/** Put in every payload. */
const WORKSPACE_ID = "emulator-workspace";

function scaled(b: BreakerConfig, scale: number): BreakerConfig {
  return {
    ...b,
    windowMs: b.windowMs / scale,
    sustainedForMs: b.sustainedForMs / scale,
    bandResetsAfterIdleMs: b.bandResetsAfterIdleMs === null
      ? null
      : b.bandResetsAfterIdleMs / scale,
  };
}

/** The delivery engine; see the module doc. */
export class WebhookEngine {
  /** The tables. */
  readonly #store: WebhookStore;
  /** The retry schedule in force (delays already divided by timeScale). */
  readonly retryCfg: RetryConfig;
  /** The breaker in force (durations already divided by timeScale). */
  readonly breakerCfg: BreakerConfig;
  /** HTTP timeout of one attempt, ms. */
  readonly deliveryTimeoutMs: number;
  /** Attempts in flight per endpoint. */
  readonly concurrency: number;
  readonly #signer: BodySigner;
  /** The endpoints: create, read, update, delete, their last active hour. */
  readonly endpoints: Endpoints;
  /** The resends and resend jobs. */
  readonly resends: Resends;
  readonly #log: (line: string) => void;
  readonly #clock: Clock;
  readonly #fetch?: typeof fetch;
  readonly #scheduler: Scheduler;
  readonly #breaker: BreakerContext;
  #abort = new AbortController();
  #inflight = new Set<Promise<void>>();
  #bodies = new Map<number, { series: number; body: string; sig: string }>();
  /** Notifications with an attempt on the wire: never two at once for one notification. */
  #onWire = new Set<number>();
  #stopped = false;
  /** Finished attempts waiting for this turn's group commit. */
  #toRecord: {
    ep: Endpoint;
    started: NotificationRow;
    rec: AttemptRecord;
    done: (e?: unknown) => void;
  }[] = [];
  /** Called after each recorded attempt (tests, console). */
  onAttempt?: (n: NotificationRow, a: AttemptRecord) => void;

  /** Builds the engine; call {@linkcode WebhookEngine.start} to load and schedule. */
  constructor(opts: WebhookEngineOptions) {
    const scale = opts.timeScale ?? 1;
    if (!(scale > 0)) throw new EmulatorConfigError(`timeScale must be above 0, got ${scale}.`);
    this.#store = opts.store;
    this.#signer = opts.signer;
    const r = DEFAULT_RETRY_CONFIG;
    this.retryCfg = { ...r, delaysMs: r.delaysMs.map((d) => d / scale) };
    const configured = opts.breaker ?? DEFAULT_BREAKER_CONFIG;
    this.breakerCfg = scaled(configured, scale);
    this.deliveryTimeoutMs = opts.deliveryTimeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
    this.concurrency = opts.concurrency ?? 8;
    this.#log = opts.log ?? (() => {});
    this.#clock = opts.clock ?? systemClock(opts.now ?? Date.now);
    this.#fetch = opts.fetch;
    this.#scheduler = new Scheduler(this.#clock, (due) => this.#onDue(due));
    const now = () => this.#clock.now();
    this.endpoints = new Endpoints({
      store: this.#store,
      scheduler: this.#scheduler,
      breaker: this.breakerCfg,
      now,
    });
    this.resends = new Resends({
      store: this.#store,
      endpoints: this.endpoints,
      scheduler: this.#scheduler,
      clock: this.#clock,
    });
    this.#breaker = {
      store: this.#store,
      endpoints: this.endpoints,
      breaker: this.breakerCfg,
      configured,
      consoleUrl: opts.consoleUrl,
    };
  }

  // ------------------------------------------------------------ lifecycle

  /** Loads endpoints (rebuilding each breaker from stored attempts), pending notifications and unfinished jobs. */
  start(): void {
    this.endpoints.load();
    this.endpoints.schedulePending(this.#clock.now());
    this.resends.resume();
  }

  /** Stops the timer and aborts attempts in flight (they are not recorded, so they are made again after a restart). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#scheduler.stop();
    this.resends.stop();
    this.#abort.abort(new DOMException("emulator stopping", "AbortError"));
    await Promise.allSettled([...this.#inflight]);
  }

  /** Resolves once no attempt is on the wire (tests on virtual time wait with it). */
  async settled(): Promise<void> {
    while (this.#inflight.size) await Promise.allSettled([...this.#inflight]);
  }

  // ------------------------------------------------------------ notifications

  /**
   * Creates one notification per endpoint (ENABLED or SUSPENDED) subscribed
   * to the event, committed before it returns. Suspended endpoints' wait ON_HOLD.
   */
  publish(event: EmulatorEvent): { id: string; webhookId: string }[] {
    return this.publishMany([event]);
  }

  /** {@linkcode WebhookEngine.publish} for many events in one transaction. */
  publishMany(events: EmulatorEvent[]): { id: string; webhookId: string }[] {
    const now = this.#clock.now();
    const out: { id: string; webhookId: string; seq: number; status: NotificationStatus }[] = [];
    const targets = this.endpoints.all().filter((e) =>
      e.row.status === "ENABLED" || e.row.status === "SUSPENDED"
    );
    this.#store.tx(() => {
      for (const ev of events) {
        const data = JSON.stringify(ev.data ?? {});
        for (const ep of targets) {
          if (!ep.row.events.includes(ev.eventType)) continue;
          const id = crypto.randomUUID();
          const status = waitingStatus("IN_PROGRESS", ep.row.status);
          const seq = this.#store.insertNotification({
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
    for (const o of out) {
      if (o.status === "IN_PROGRESS") this.#scheduler.schedule(o.seq, o.webhookId, now);
    }
    return out.map(({ id, webhookId }) => ({ id, webhookId }));
  }

  // ------------------------------------------------------------ the delivery loop

  #onDue(due: DueEntry[]): void {
    const touched = new Set<Endpoint>();
    for (const e of due) {
      const ep = this.endpoints.get(e.webhookId);
      if (!ep || ep.row.status !== "ENABLED") {
        this.#scheduler.cancel(e.seq);
        continue;
      }
      ep.ready.push(e.seq);
      touched.add(ep);
    }
    for (const ep of touched) this.#pump(ep);
  }

  #pump(ep: Endpoint): void {
    while (
      ep.inFlight < this.concurrency && ep.readyHead < ep.ready.length && !this.#stopped &&
      ep.row.status === "ENABLED"
    ) {
      const seq = ep.ready[ep.readyHead++];
      if (!this.#scheduler.take(seq)) continue; // cancelled while queued
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
      `"createdAt":${n.createdAt},"workspaceId":${JSON.stringify(WORKSPACE_ID)},` +
      `"webhookId":${JSON.stringify(n.webhookId)}}`;
  }

  async #attempt(ep: Endpoint, seq: number): Promise<void> {
    const n = this.#store.notificationBySeq(seq);
    if (!n || n.status !== "IN_PROGRESS") return;
    let signed = this.#bodies.get(seq);
    if (!signed || signed.series !== n.series) {
      const body = this.#payload(n);
      signed = { series: n.series, body, sig: await this.#signer.sign(body) };
      this.#bodies.set(seq, signed);
    }
    const rec = await deliverOnce({
      url: ep.row.url,
      body: signed.body,
      headers: { [SIGNATURE_HEADER]: signed.sig },
      timeoutMs: this.deliveryTimeoutMs,
      signal: this.#abort.signal,
      fetch: this.#fetch,
      now: () => this.#clock.now(),
    });
    if (this.#stopped) return; // not recorded: made again after a restart
    await this.#record(ep, n, rec);
  }

  /** Queues a finished attempt for this turn's group commit; resolves once it is recorded. */
  #record(ep: Endpoint, started: NotificationRow, rec: AttemptRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#toRecord.push({
        ep,
        started,
        rec,
        done: (e) => e === undefined ? resolve() : reject(e),
      });
      if (this.#toRecord.length === 1) queueMicrotask(() => this.#recordAll());
    });
  }

  /**
   * The group commit: records every queued attempt in one transaction (each
   * with its own rules, in the order they ended), then schedules what
   * follows from each. Should the transaction fail, none is recorded and
   * each attempt's delivery reports the error (as one alone would).
   */
  #recordAll(): void {
    const batch = this.#toRecord;
    this.#toRecord = [];
    const now = this.#clock.now();
    let recorded: Recorded[];
    try {
      recorded = this.#store.tx(() =>
        batch.map(({ ep, started, rec }) =>
          recordAttempt(this.#breaker, this.retryCfg, {
            ep,
            live: this.endpoints.get(started.webhookId) === ep,
            started,
            rec,
            now,
          })
        )
      );
    } catch (e) {
      for (const b of batch) b.done(e ?? new Error("recording failed"));
      return;
    }
    for (let i = 0; i < batch.length; i++) {
      const { ep, rec, done } = batch[i];
      try {
        this.#afterAttempt(ep, rec, recorded[i], now);
        done();
      } catch (e) {
        done(e ?? new Error("after the attempt"));
      }
    }
  }

  /** After an attempt was recorded (the rules applied): logs a suspension, schedules what follows. */
  #afterAttempt(
    ep: Endpoint,
    rec: AttemptRecord,
    { suspended, updated, resent }: Recorded,
    now: number,
  ): void {
    if (suspended) {
      this.#log(
        `webhook ${ep.row.id} SUSPENDED (${suspended.reason}) at ${
          new Date(suspended.time).toISOString()
        }: ${count(suspended.errors, "error")} in ${
          count(suspended.attempts, "attempt")
        } of the window; e-mailed ${count(ADMINS.length, "admin")}`,
      );
    }
    if (resent?.status === "IN_PROGRESS") {
      this.#scheduler.schedule(resent.seq, resent.webhookId, resent.nextAttemptAt ?? now);
    }
    if (updated) {
      if (updated.status === "IN_PROGRESS") {
        this.#scheduler.schedule(updated.seq, updated.webhookId, updated.nextAttemptAt!);
      } else if (updated.status !== "ON_HOLD") this.#bodies.delete(updated.seq);
      this.onAttempt?.(updated, rec);
    }
  }
}

/** `1 error`, `5 errors`: a count with its noun. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
