/**
 * Webhooks V2 operations on the {@linkcode PlatformClient}: endpoints,
 * notifications, attempts, resends and the error-rate metric.
 *
 * @module
 */

import type { ApiResponse, PlatformClient } from "./client.ts";
import {
  MetricValueSchema,
  type Notification,
  type NotificationAttempt,
  NotificationAttemptSchema,
  NotificationSchema,
  type Page,
  pageSchema,
  ResendByQuerySchema,
  ResendFailedSchema,
  type ResendJob,
  ResendJobSchema,
  type Webhook,
  WebhookSchema,
} from "./schemas.ts";

import { NOTIFICATION_STATUSES } from "../core/mod.ts";

/** The path of webhook `webhookId`, or of what `parts` name under it, each part URL-encoded. */
const hook = (webhookId: string, ...parts: string[]) =>
  ["/v1/webhooks", ...[webhookId, ...parts].map(encodeURIComponent)].join("/");

/** Lists webhook endpoints, following pages. */
export function listWebhooks(
  client: PlatformClient,
  query: { order?: string; pageSize?: number } = {},
): AsyncGenerator<Webhook> {
  return client.paginate("/v1/webhooks", {
    operation: "list webhooks",
    query: { order: query.order, pageSize: query.pageSize },
    schema: pageSchema(WebhookSchema),
  });
}

/** Gets one webhook endpoint. */
export async function getWebhook(client: PlatformClient, webhookId: string): Promise<Webhook> {
  return (await client.request("GET", hook(webhookId), {
    operation: `get webhook ${JSON.stringify(webhookId)}`,
    schema: WebhookSchema,
  })).data;
}

/** What Create Webhook takes (`enabled` defaults to true on the platform). */
export interface WebhookCreate {
  /** The endpoint's URL. */
  url: string;
  /** Event types to deliver, e.g. `transaction.created`. */
  events: string[];
  /** Free text. */
  description?: string;
  /** false creates it DISABLED. */
  enabled?: boolean;
}

/** Create Webhook (POST `/v1/webhooks`, 201 with the webhook). One Idempotency-Key for all retries. */
export async function createWebhook(
  client: PlatformClient,
  body: WebhookCreate,
  idempotencyKey?: string,
): Promise<Webhook> {
  return (await client.request("POST", "/v1/webhooks", {
    operation: `create a webhook for ${body.url}`,
    body,
    idempotencyKey,
    schema: WebhookSchema,
  })).data;
}

/**
 * Delete Webhook (DELETE). The platform documents a 200 with the deleted
 * webhook; an empty answer (204) is taken as done too, and gives `undefined`.
 */
export async function deleteWebhook(
  client: PlatformClient,
  webhookId: string,
): Promise<Webhook | undefined> {
  const operation = `delete webhook ${JSON.stringify(webhookId)}`;
  const r = await client.request("DELETE", hook(webhookId), { operation });
  // As sent (see `client.ts`), when it is a webhook (an empty answer is not).
  return WebhookSchema.safeParse(r.data).success ? r.data as Webhook : undefined;
}

/** Update Webhook (PATCH): `enabled: true` reactivates a suspended endpoint. */
export async function updateWebhook(
  client: PlatformClient,
  webhookId: string,
  patch: { enabled?: boolean; url?: string; description?: string; events?: string[] },
): Promise<Webhook> {
  return (await client.request("PATCH", hook(webhookId), {
    operation: `update webhook ${JSON.stringify(webhookId)}`,
    body: patch,
    schema: WebhookSchema,
  })).data;
}

/** The last active hour's error rate, as the platform reports it (percent). */
export async function getErrorRate(client: PlatformClient, webhookId: string): Promise<string> {
  const r = await client.request("GET", hook(webhookId, "metrics", "LAST_ACTIVE_HOUR_ERROR_RATE"), {
    operation: `get the error rate of webhook ${JSON.stringify(webhookId)}`,
    schema: MetricValueSchema,
  });
  return String(r.data.value);
}

/** Query of the notification list. */
export interface NotificationQuery {
  /** `ASC` or `DESC` (platform default DESC). */
  order?: string;
  /** One of id, createdAt, updatedAt, status, eventType, resourceId. */
  sortBy?: string;
  /** Items per page, 1-100 (platform default 100). */
  pageSize?: number;
  /** Start from this cursor. */
  pageCursor?: string;
  /** Epoch ms; the platform defaults to 31 days ago. */
  startTime?: number;
  /** Epoch ms. */
  endTime?: number;
  /** Only these statuses (repeated keys). */
  statuses?: string[];
  /** Only these event types (repeated keys). */
  events?: string[];
  /** Only this resource. */
  resourceId?: string;
}

/** The path and options of a listing of `webhookId`'s notifications matching `q`. */
function notificationList(webhookId: string, q: NotificationQuery) {
  return [hook(webhookId, "notifications"), {
    operation: `list notifications of webhook ${JSON.stringify(webhookId)}`,
    query: {
      order: q.order,
      sortBy: q.sortBy,
      pageCursor: q.pageCursor,
      pageSize: q.pageSize,
      startTime: q.startTime,
      endTime: q.endTime,
      statuses: q.statuses?.length ? q.statuses : undefined,
      events: q.events?.length ? q.events : undefined,
      resourceId: q.resourceId,
    },
    schema: pageSchema(NotificationSchema),
  }] as const;
}

/** One page of notifications, as the platform returns it. */
export async function listNotificationsPage(
  client: PlatformClient,
  webhookId: string,
  q: NotificationQuery,
): Promise<Page<Notification>> {
  return (await client.request("GET", ...notificationList(webhookId, q))).data;
}

/** Every notification matching the query, following `next` to the end (`signal` stops it). */
export function listNotifications(
  client: PlatformClient,
  webhookId: string,
  q: NotificationQuery,
  onPage?: (page: Page<Notification>) => void,
  signal?: AbortSignal,
): AsyncGenerator<Notification> {
  const [path, options] = notificationList(webhookId, q);
  return client.paginate(path, { ...options, onPage, signal });
}

/** One notification, optionally with its payload. */
export async function getNotification(
  client: PlatformClient,
  webhookId: string,
  notificationId: string,
  includeData = false,
): Promise<Notification> {
  return (await client.request("GET", hook(webhookId, "notifications", notificationId), {
    operation: `get notification ${JSON.stringify(notificationId)}`,
    query: { includeData: includeData ? true : undefined },
    schema: NotificationSchema,
  })).data;
}

/** The delivery attempts of a notification, following pages (`onPage` sees each; `signal` stops it). */
export function listAttempts(
  client: PlatformClient,
  webhookId: string,
  notificationId: string,
  pageSize?: number,
  signal?: AbortSignal,
  onPage?: (page: Page<NotificationAttempt>) => void,
): AsyncGenerator<NotificationAttempt> {
  return client.paginate(hook(webhookId, "notifications", notificationId, "attempts"), {
    operation: `list the attempts of notification ${JSON.stringify(notificationId)}`,
    query: { pageSize },
    schema: pageSchema(NotificationAttemptSchema),
    signal,
    onPage,
  });
}

/** Resends one notification (202, no body). */
export async function resendNotification(
  client: PlatformClient,
  webhookId: string,
  notificationId: string,
  idempotencyKey?: string,
): Promise<ApiResponse<unknown>> {
  return await client.request("POST", hook(webhookId, "notifications", notificationId, "resend"), {
    operation: `resend notification ${JSON.stringify(notificationId)}`,
    idempotencyKey,
  });
}

/**
 * How many notifications a resend by resource would resend: those of
 * `resourceId` created in the 30 days before `now` whose status is not in
 * `excludeStatuses` (listed, the platform's answer to the resend carries no count).
 *
 * @example
 * ```ts
 * import type { PlatformClient } from "./mod.ts";
 * declare const client: PlatformClient;
 * await countResendByResource(client, "w1", "tx1", ["COMPLETED"], Date.now()); // 3
 * ```
 */
export async function countResendByResource(
  client: PlatformClient,
  webhookId: string,
  resourceId: string,
  excludeStatuses: readonly string[],
  now: number,
): Promise<number> {
  const statuses = NOTIFICATION_STATUSES.filter((s) => !excludeStatuses.includes(s));
  if (statuses.length === 0) return 0;
  let count = 0;
  for await (
    const _ of listNotifications(client, webhookId, {
      resourceId,
      startTime: now - 30 * 86_400_000,
      statuses: excludeStatuses.length ? [...statuses] : undefined,
      pageSize: 100,
    })
  ) count++;
  return count;
}

/** Resends the notifications of one resource from the last 30 days. */
export async function resendByResource(
  client: PlatformClient,
  webhookId: string,
  body: { resourceId: string; excludeStatuses?: string[] },
  idempotencyKey?: string,
): Promise<ApiResponse<unknown>> {
  return await client.request("POST", hook(webhookId, "notifications", "resend_by_resource"), {
    operation: `resend the notifications of resource ${JSON.stringify(body.resourceId)}`,
    body,
    idempotencyKey,
  });
}

/** Resends the failed notifications of the last 24 hours; 202 carries a job `Location`. */
export async function resendFailed(
  client: PlatformClient,
  webhookId: string,
  body: { startTime?: number; events?: string[] },
  idempotencyKey?: string,
): Promise<ApiResponse<{ total: number }> & { location?: string; jobId?: string }> {
  return withJob(
    await client.request("POST", hook(webhookId, "notifications", "resend_failed"), {
      operation: `resend the failed notifications of webhook ${JSON.stringify(webhookId)}`,
      body,
      idempotencyKey,
      schema: ResendFailedSchema,
    }),
  );
}

/** A resend's answer with the job its `Location` names, if any. */
function withJob<T>(r: ApiResponse<T>): ApiResponse<T> & { location?: string; jobId?: string } {
  const location = r.headers.get("location") ?? undefined;
  return { ...r, location, jobId: location?.split("/").filter(Boolean).pop() };
}

/** The filters of a resend by query (the SDK's `ResendByQueryRequest`). */
export interface ResendQuery {
  /** Statuses to resend; the platform's default FAILED and ON_HOLD. */
  statuses?: string[];
  /** Window start, epoch ms (the last 72 hours; default 24 hours ago). */
  startTime?: number;
  /** Window end, epoch ms (needs startTime; at most 24 hours after it). */
  endTime?: number;
  /** Event types; absent or empty: all. */
  events?: string[];
  /** Only this resource. */
  resourceId?: string;
}

/**
 * Resends the notifications a query matches (the console's "Resend
 * notifications"); 200 `{total: 0}` when none match, else 202 with a job
 * `Location` (followed with {@linkcode getResendJob} and kind `query`).
 */
export async function resendByQuery(
  client: PlatformClient,
  webhookId: string,
  body: ResendQuery,
  idempotencyKey?: string,
): Promise<ApiResponse<{ total?: number }> & { location?: string; jobId?: string }> {
  return withJob(
    await client.request("POST", hook(webhookId, "notifications", "resend_by_query"), {
      operation: `resend the notifications of webhook ${JSON.stringify(webhookId)} by query`,
      body,
      idempotencyKey,
      schema: ResendByQuerySchema,
    }),
  );
}

/** Status of a resend job: of resend failed (`failed`, the default) or of resend by query (`query`). */
export async function getResendJob(
  client: PlatformClient,
  webhookId: string,
  jobId: string,
  kind: "failed" | "query" = "failed",
): Promise<ResendJob> {
  const resends = kind === "query" ? "resend_by_query" : "resend_failed";
  return (await client.request("GET", hook(webhookId, "notifications", resends, "jobs", jobId), {
    operation: `get resend job ${JSON.stringify(jobId)}`,
    schema: ResendJobSchema,
  })).data;
}
