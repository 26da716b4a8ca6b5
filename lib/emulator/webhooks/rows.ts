/**
 * The rows of the emulator's webhook tables as the code sees them
 * (endpoints, notifications, attempts, resend jobs, outbox mail), how a
 * SQLite row becomes one, and how the Webhooks V2 API (`platform-api.md`)
 * shows each. No SQL here: the queries are in `store.ts`.
 *
 * @module
 */

import type { NotificationStatus, ResendJobStatus, WebhookStatus } from "../../core/mod.ts";
import type { Row } from "../store.ts";

/** A webhook endpoint row. */
export interface WebhookRow {
  /** Creation order. */
  seq: number;
  /** Its id (a UUID). */
  id: string;
  /** Where notifications are POSTed. */
  url: string;
  /** Event types it is subscribed to. */
  events: string[];
  /** Free text, or null. */
  description: string | null;
  /** ENABLED, DISABLED or SUSPENDED. */
  status: WebhookStatus;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms. */
  updatedAt: number;
  /** When the breaker's error rate entered the band, or null. */
  bandSince: number | null;
  /** Time of the last attempt the breaker evaluated, or null. */
  lastAttemptAt: number | null;
  /** Attempts with a seq at or below this were evaluated before the last suspension/re-enable. */
  breakerResetSeq: number;
}

/** A notification row. */
export interface NotificationRow {
  /** Row id (creation order). */
  seq: number;
  /** Its id (a UUID). */
  id: string;
  /** Its endpoint. */
  webhookId: string;
  /** e.g. `transaction.created`. */
  eventType: string;
  /** The resource it is about, or null. */
  resourceId: string | null;
  /** The resource as JSON text. */
  data: string;
  /** Where its delivery stands. */
  status: NotificationStatus;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms. */
  updatedAt: number;
  /** Attempts in the current series. */
  attempts: number;
  /** sentTime of the latest attempt of the series, or null. */
  lastSentTime: number | null;
  /** When the next attempt is due (IN_PROGRESS / ON_HOLD), else null. */
  nextAttemptAt: number | null;
  /** Incremented by each resend; an attempt started in an older series does not move the new one. */
  series: number;
}

/** An attempt row. */
export interface AttemptRow {
  /** Row id (recording order). */
  seq: number;
  /** The notification attempted. */
  notificationId: string;
  /** Its endpoint. */
  webhookId: string;
  /** Epoch ms when the request was started. */
  sentTime: number;
  /** Milliseconds until the answer or the failure. */
  duration: number;
  /** HTTP status, or null when none arrived. */
  responseCode: number | null;
  /** Why no status arrived, or null. */
  failureReason: "TIMED_OUT" | "NO_RESPONSE" | null;
  /** 1 when the attempt counted as an error for the breaker. */
  error: number;
  /** 1 when the breaker evaluated it (the endpoint was ENABLED). */
  evaluated: number;
}

/** One line of the delivery log: an attempt, or a reactivation of an endpoint. */
export type DeliveryLogEntry =
  | { kind: "attempt"; attempt: AttemptRow }
  | { kind: "enable"; webhookId: string; time: number };

/**
 * A resend job row: `failed` (resend failed: FAILED notifications) or
 * `query` (resend by query: notifications of the given statuses).
 */
export interface JobRow {
  /** Which call made it (its status is read under that call's path). */
  kind: "failed" | "query";
  /** The statuses a notification must still have when its turn comes. */
  statuses: NotificationStatus[];
  /** Its id (a UUID). */
  id: string;
  /** Its endpoint. */
  webhookId: string;
  /** Where the job stands. */
  status: ResendJobStatus;
  /** Notifications handled so far. */
  processed: number;
  /** Notifications to handle. */
  total: number;
  /** The notification seqs still to resend (JSON array). */
  pending: number[];
  /** Epoch ms. */
  createdAt: number;
}

/** An e-mail in the outbox, as the admin endpoint shows it. */
export interface OutboxMail {
  /** Recipient address. */
  to: string;
  /** Subject line. */
  subject: string;
  /** Plain-text body. */
  body: string;
  /** The suspended endpoint. */
  webhookId: string;
  /** Epoch ms. */
  createdAt: number;
}

/** The webhook row of SQLite row `r`, read under its fields' names (`store.ts`). */
export function webhookFrom(r: Row): WebhookRow {
  return { ...r, events: JSON.parse(r.events as string) } as WebhookRow;
}

/** The job row of SQLite row `r`, read under its fields' names (`store.ts`). */
export function jobFrom(r: Row): JobRow {
  return {
    ...r,
    pending: JSON.parse(r.pending as string),
    kind: r.kind === "query" ? "query" : "failed",
    statuses: r.statuses ? JSON.parse(r.statuses as string) : ["FAILED"],
  } as JobRow;
}

/**
 * The API's view of an endpoint.
 *
 * @example
 * ```ts
 * declare const row: WebhookRow;
 * webhookJson(row); // { id, url, events, status, createdAt, updatedAt, description? }
 * ```
 */
export function webhookJson(w: WebhookRow): Record<string, unknown> {
  const o: Record<string, unknown> = {
    id: w.id,
    url: w.url,
    events: w.events,
    status: w.status,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
  if (w.description !== null) o.description = w.description;
  return o;
}

/**
 * The API's view of a notification (`data` only when asked).
 *
 * @example
 * ```ts
 * declare const row: NotificationRow;
 * notificationJson(row, true); // { id, createdAt, updatedAt, status, eventType, resourceId, data }
 * ```
 */
export function notificationJson(n: NotificationRow, withData = false): Record<string, unknown> {
  const o: Record<string, unknown> = {
    id: n.id,
    createdAt: n.createdAt,
    updatedAt: n.updatedAt,
    status: n.status,
    eventType: n.eventType,
    resourceId: n.resourceId,
  };
  if (withData) o.data = JSON.parse(n.data);
  return o;
}

/**
 * The API's view of an attempt (`NotificationAttempt`).
 *
 * @example
 * ```ts
 * declare const row: AttemptRow;
 * attemptJson(row); // { sentTime, duration, responseCode? , failureReason? }
 * ```
 */
export function attemptJson(a: AttemptRow): Record<string, unknown> {
  const o: Record<string, unknown> = { sentTime: a.sentTime, duration: a.duration };
  if (a.responseCode !== null) o.responseCode = a.responseCode;
  if (a.failureReason !== null) o.failureReason = a.failureReason;
  return o;
}

/**
 * A line of the admin delivery log (the input of `service breaker simulate`):
 * an attempt (its fields plus its endpoint and notification) or a reactivation, `{webhookId, sentTime, action: "enable"}` (breaker.md §4).
 *
 * @example
 * ```ts
 * deliveryLogJson({ kind: "enable", webhookId: "w1", time: 0 }); // { webhookId: "w1", sentTime: 0, action: "enable" }
 * ```
 */
export function deliveryLogJson(e: DeliveryLogEntry): Record<string, unknown> {
  return e.kind === "attempt"
    ? {
      webhookId: e.attempt.webhookId,
      notificationId: e.attempt.notificationId,
      ...attemptJson(e.attempt),
    }
    : { webhookId: e.webhookId, sentTime: e.time, action: "enable" };
}

/**
 * The API's view of a resend job.
 *
 * @example
 * ```ts
 * declare const job: JobRow;
 * jobJson(job); // { jobId, status, processed, total }
 * ```
 */
export function jobJson(j: JobRow): Record<string, unknown> {
  return { jobId: j.id, status: j.status, processed: j.processed, total: j.total };
}
