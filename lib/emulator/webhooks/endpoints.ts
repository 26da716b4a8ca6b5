/**
 * The webhook endpoints in memory, each with its breaker state and its queue
 * of due notifications, kept in step with the store: create, read, update
 * (`enabled: true` re-enables a SUSPENDED endpoint at once, breaker.md §3),
 * delete, and holding an endpoint's notifications when it stops receiving.
 *
 * @module
 */

import {
  type BreakerConfig,
  type BreakerState,
  lastActiveWindowErrors,
  restoreBreakerState,
  transition,
  type WindowErrors,
} from "../../webhooks/mod.ts";
import { NotFoundError } from "../../core/mod.ts";
import type { Scheduler } from "./scheduler.ts";
import type { WebhookStore } from "./store.ts";
import type { WebhookRow } from "./rows.ts";
import type { WebhookCreate } from "../../platform/webhooks.ts";

/** One endpoint as the engine holds it. */
export interface Endpoint {
  /** Its row as stored. */
  row: WebhookRow;
  /** Its breaker (rebuilt from the stored attempts at start). */
  breaker: BreakerState;
  /** Attempts on the wire. */
  inFlight: number;
  /** Due notifications (seqs) waiting for a free slot, FIFO from `readyHead`. */
  ready: number[];
  /** Index of the next ready seq. */
  readyHead: number;
  /** Last time given to the breaker (its events must not go back in time). */
  lastEvalT: number;
}

/** The fields `PATCH /v1/webhooks/{id}` may change (`enabled`: see {@linkcode Endpoints.update}). */
export type WebhookPatch = Partial<WebhookCreate>;

/** Options of {@linkcode Endpoints}. */
export interface EndpointsOptions {
  /** The tables. */
  store: WebhookStore;
  /** The due-time queue (to cancel and resume schedules). */
  scheduler: Scheduler;
  /** The breaker in force (durations already scaled). */
  breaker: BreakerConfig;
  /** Clock. */
  now: () => number;
}

/**
 * The live endpoints; see the module doc.
 *
 * @example
 * ```ts
 * import { DEFAULT_BREAKER_CONFIG } from "../../webhooks/mod.ts";
 * import type { Scheduler } from "./scheduler.ts";
 * import type { WebhookStore } from "./store.ts";
 * declare const store: WebhookStore, scheduler: Scheduler;
 * const breaker = DEFAULT_BREAKER_CONFIG;
 * const endpoints = new Endpoints({ store, scheduler, breaker, now: Date.now });
 * endpoints.load();
 * endpoints.create({ url: "http://127.0.0.1:8080/hook", events: ["transaction.created"] });
 * ```
 */
export class Endpoints {
  readonly #o: EndpointsOptions;
  readonly #byId = new Map<string, Endpoint>();

  /** Builds an empty set; {@linkcode Endpoints.load} reads the stored ones. */
  constructor(opts: EndpointsOptions) {
    this.#o = opts;
  }

  /** Loads every stored endpoint, rebuilding each breaker from its stored attempts. */
  load(): void {
    for (const row of this.#o.store.allWebhooks()) this.#byId.set(row.id, this.#endpointOf(row));
  }

  #endpointOf(row: WebhookRow): Endpoint {
    const since = (row.lastAttemptAt ?? 0) - this.#o.breaker.windowMs;
    const window: [number, 0 | 1][] = row.status === "SUSPENDED"
      ? []
      : this.#o.store.windowAttempts(row.id, row.breakerResetSeq, since).map((a) => [
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

  /** The live endpoint `id`, or undefined (deleted, unknown). */
  get(id: string): Endpoint | undefined {
    return this.#byId.get(id);
  }

  /** The live endpoint `id`, or a 404. */
  #live(id: string): Endpoint {
    const ep = this.#byId.get(id);
    if (!ep) throw new NotFoundError(`Webhook ${JSON.stringify(id)} not found.`);
    return ep;
  }

  /** The row of endpoint `id`, or a 404. */
  row(id: string): WebhookRow {
    return this.#live(id).row;
  }

  /** Every live endpoint, in creation order. */
  all(): Endpoint[] {
    return [...this.#byId.values()];
  }

  /** Creates an endpoint (ENABLED unless `enabled: false`). */
  create(input: WebhookCreate): WebhookRow {
    const now = this.#o.now();
    const row = this.#o.store.insertWebhook({
      id: crypto.randomUUID(),
      url: input.url,
      events: input.events,
      description: input.description ?? null,
      status: input.enabled === false ? "DISABLED" : "ENABLED",
      createdAt: now,
      updatedAt: now,
    });
    this.#byId.set(row.id, this.#endpointOf(row));
    return row;
  }

  /**
   * Updates an endpoint. `enabled: true` re-enables a SUSPENDED (or
   * DISABLED) one at once, with an empty window and no band (breaker.md §3);
   * its waiting notifications resume. `enabled: false` disables it.
   */
  update(id: string, patch: WebhookPatch): WebhookRow {
    const ep = this.#live(id);
    const now = this.#o.now();
    const row = { ...ep.row };
    if (patch.url !== undefined) row.url = patch.url;
    if (patch.description !== undefined) row.description = patch.description;
    if (patch.events !== undefined) row.events = patch.events;
    row.updatedAt = now;
    let resume = false;
    this.#o.store.tx(() => {
      if (patch.enabled === true && row.status !== "ENABLED") {
        if (ep.breaker.status === "SUSPENDED") {
          transition(ep.breaker, { type: "enable", time: now }, this.#o.breaker);
          row.breakerResetSeq = this.#o.store.maxAttemptSeq();
          row.bandSince = null;
          // the delivery log's `action: enable` line
          this.#o.store.insertEnable(id, now, row.breakerResetSeq);
        }
        row.status = "ENABLED";
        resume = true;
        this.#o.store.resumeHeld(id, now);
      } else if (patch.enabled === false && row.status !== "DISABLED") {
        row.status = "DISABLED";
        this.hold(id, now);
      }
      this.#o.store.updateWebhook(row);
    });
    ep.row = row;
    if (resume) this.schedulePending(now, id);
    return row;
  }

  /** Schedules the IN_PROGRESS notifications (of endpoint `webhookId`, or of all) when due. */
  schedulePending(now: number, webhookId?: string): void {
    for (const n of this.#o.store.pendingNotifications(webhookId)) {
      if (n.status === "IN_PROGRESS") {
        this.#o.scheduler.schedule(n.seq, n.webhookId, n.nextAttemptAt ?? now);
      }
    }
  }

  /** Deletes an endpoint; its waiting notifications are no longer delivered. */
  delete(id: string): WebhookRow {
    const row = this.row(id);
    const now = this.#o.now();
    this.#o.store.tx(() => {
      this.#o.store.deleteWebhook(id, now);
      this.hold(id, now);
    });
    this.#byId.delete(id);
    return row;
  }

  /**
   * Moves an endpoint's IN_PROGRESS notifications to ON_HOLD and forgets
   * their schedule. Call inside the store transaction of the change.
   */
  hold(webhookId: string, now: number): void {
    this.#o.store.holdInProgress(webhookId, now);
    const ep = this.#byId.get(webhookId);
    if (ep) {
      for (let i = ep.readyHead; i < ep.ready.length; i++) this.#o.scheduler.cancel(ep.ready[i]);
      ep.ready = [];
      ep.readyHead = 0;
    }
    this.#o.scheduler.cancelEndpoint(webhookId);
  }

  /**
   * The endpoint's last active hour (the breaker's window, scaled): its
   * attempts and errors over (L - W, L] where L is its latest attempt, as
   * the platform's `LAST_ACTIVE_HOUR_ERROR_RATE` metric and the console
   * both show it ({@linkcode lastActiveWindowErrors}).
   */
  lastActiveWindow(id: string): WindowErrors {
    this.row(id);
    const W = this.#o.breaker.windowMs;
    return lastActiveWindowErrors(this.#o.store.lastActiveAttempts(id, W), W);
  }
}
