/**
 * How the Webhooks V2 API shows its objects (`platform-api.md`): endpoints,
 * notifications, attempts and resend jobs, from their stored rows.
 *
 * @module
 */

import type {
  AttemptRow,
  DeliveryLogEntry,
  JobRow,
  NotificationRow,
  OutboxMail,
  WebhookRow,
} from "./rows.ts";

/**
 * The API's view of an endpoint.
 *
 * @example
 * ```ts
 * import type { WebhookRow } from "./rows.ts";
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
 * import type { NotificationRow } from "./rows.ts";
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
 * import type { AttemptRow } from "./rows.ts";
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
 * An attempt as the admin delivery log shows it: the attempt's fields plus
 * its endpoint and notification, the input of `service breaker simulate`.
 */
function attemptLogJson(a: AttemptRow): Record<string, unknown> {
  return { webhookId: a.webhookId, notificationId: a.notificationId, ...attemptJson(a) };
}

/**
 * A line of the admin delivery log: an attempt ({@linkcode attemptLogJson})
 * or a reactivation, `{webhookId, sentTime, action: "enable"}` (breaker.md §4).
 *
 * @example
 * ```ts
 * deliveryLogJson({ kind: "enable", webhookId: "w1", time: 0 }); // { webhookId: "w1", sentTime: 0, action: "enable" }
 * ```
 */
export function deliveryLogJson(e: DeliveryLogEntry): Record<string, unknown> {
  return e.kind === "attempt"
    ? attemptLogJson(e.attempt)
    : { webhookId: e.webhookId, sentTime: e.time, action: "enable" };
}

/**
 * The API's view of a resend job.
 *
 * @example
 * ```ts
 * import type { JobRow } from "./rows.ts";
 * declare const job: JobRow;
 * jobJson(job); // { jobId, status, processed, total }
 * ```
 */
export function jobJson(j: JobRow): Record<string, unknown> {
  return { jobId: j.id, status: j.status, processed: j.processed, total: j.total };
}

/**
 * An outbox e-mail as the admin endpoint shows it.
 *
 * @example
 * ```ts
 * import type { OutboxMail } from "./rows.ts";
 * declare const mail: OutboxMail;
 * mailJson(mail); // { to, subject, body, webhookId, createdAt }
 * ```
 */
export function mailJson(m: OutboxMail): Record<string, unknown> {
  const { to, subject, body, webhookId, createdAt } = m;
  return { to, subject, body, webhookId, createdAt };
}
