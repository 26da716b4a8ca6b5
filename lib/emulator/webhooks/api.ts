/**
 * The Webhooks V2 REST surface of the emulator (`platform-api.md`), plus its
 * admin endpoints, as a function from an already-authenticated request to a
 * result. The emulator's router does authentication, `Idempotency-Key`,
 * `X-Request-ID` and JSON encoding; this file only knows the shapes.
 *
 * Admin endpoints (paths without `/v1`; see `routes.ts`):
 *
 * - `POST /admin/notifications` `{eventType, resourceId?, data?, count?}`
 *   → 201 `{data: [{id, webhookId}]}`: creates `count` (default 1, at most
 *   10 000) events; each makes one notification per ENABLED or SUSPENDED
 *   endpoint subscribed to `eventType`.
 * - `GET /admin/attempts[?webhookId=W]` → 200 `{data: [{webhookId, notificationId,
 *   sentTime, duration, responseCode?, failureReason?}]}`: every attempt in the
 *   order it was recorded — the delivery log `service breaker simulate` reads.
 * - `GET /admin/outbox` → 200 `{data: [{to, subject, body, webhookId, createdAt}]}`:
 *   the e-mails the emulator "sent" (suspensions).
 *
 * @module
 */

import type { SnapshotPager } from "./notification_paging.ts";
import { WebhookApiError, type WebhookEngine } from "./engine.ts";
import type { AttemptRow, NotificationRow, WebhookRow } from "./store.ts";
import { base64url } from "../../platform/mod.ts";

/** A request after authentication: the path without `/v1`. */
export interface ApiRequest {
  /** HTTP method, upper case. */
  method: string;
  /** e.g. `/webhooks/abc/notifications` */
  path: string;
  /** The query string. */
  query: URLSearchParams;
  /** The parsed JSON body, or undefined when there was none. */
  body: unknown;
}

/** What to answer. `body` undefined: no body. */
export interface ApiResult {
  /** HTTP status. */
  status: number;
  /** JSON body, or none. */
  body?: unknown;
  /** Extra headers (e.g. `Location`). */
  headers?: Record<string, string>;
}

const STATUSES = ["COMPLETED", "FAILED", "IN_PROGRESS", "ON_HOLD"];
const SORT_COLUMNS: Record<string, string> = {
  id: "id",
  createdAt: "created_at",
  updatedAt: "updated_at",
  status: "status",
  eventType: "event_type",
  resourceId: "resource_id",
};
const DAY = 86_400_000;

function bad(message: string): never {
  throw new WebhookApiError(400, message, 1000);
}

/** The API's view of an endpoint. */
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

/** The API's view of a notification. */
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

function attemptJson(a: AttemptRow): Record<string, unknown> {
  const o: Record<string, unknown> = { sentTime: a.sentTime, duration: a.duration };
  if (a.responseCode !== null) o.responseCode = a.responseCode;
  if (a.failureReason !== null) o.failureReason = a.failureReason;
  return o;
}

function intParam(q: URLSearchParams, name: string, def: number, min: number, max: number): number {
  const v = q.get(name);
  if (v === null || v === "") return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) {
    bad(`${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(v)}.`);
  }
  return n;
}

function timeParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) {
    bad(`${name} must be epoch milliseconds (a whole number), got ${JSON.stringify(v)}.`);
  }
  return n;
}

function orderParam(q: URLSearchParams, def: "ASC" | "DESC"): "ASC" | "DESC" {
  const v = q.get("order");
  if (v === null || v === "") return def;
  if (v !== "ASC" && v !== "DESC") bad(`order must be ASC or DESC, got ${JSON.stringify(v)}.`);
  return v;
}

/** Repeated keys, also accepting one comma-separated value. */
function listParam(q: URLSearchParams, name: string): string[] {
  return q.getAll(name).flatMap((v) => v.split(",")).map((s) => s.trim()).filter(Boolean);
}

function obj(body: unknown, what: string): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== "object" || Array.isArray(body)) {
    bad(`${what}: the body must be a JSON object.`);
  }
  return body as Record<string, unknown>;
}

function checkUrl(v: unknown): string {
  if (typeof v !== "string") bad("url is required: an http(s) URL string.");
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    bad(`url ${JSON.stringify(v)} is not a valid URL.`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    bad(`url must use http or https, got ${JSON.stringify(v)}.`);
  }
  return v;
}

function checkEvents(v: unknown): string[] {
  if (!Array.isArray(v) || v.length === 0 || !v.every((e) => typeof e === "string" && e)) {
    bad('events must be a non-empty array of event types, e.g. ["transaction.created"].');
  }
  return [...new Set(v as string[])];
}

function checkStatuses(v: unknown, name: string): string[] {
  if (!Array.isArray(v) || !v.every((s) => STATUSES.includes(s))) {
    bad(`${name} must be an array of ${STATUSES.join(", ")}.`);
  }
  return v as string[];
}

/**
 * Handles one Webhooks V2 or admin request; returns `null` when the path is
 * not one of them. Throws {@linkcode WebhookApiError} for 400/404 answers
 * (use {@linkcode errorResult}).
 */
export function handleWebhooksApi(
  engine: WebhookEngine,
  pager: SnapshotPager,
  req: ApiRequest,
  now: () => number = Date.now,
): ApiResult | null {
  const seg = req.path.replace(/\/+$/, "").split("/").slice(1).map(decodeURIComponent);
  const m = req.method;
  const q = req.query;

  if (seg[0] === "admin") {
    if (seg[1] === "notifications" && seg.length === 2 && m === "POST") {
      const b = obj(req.body, "create notifications");
      if (typeof b.eventType !== "string" || !b.eventType) {
        bad('eventType is required, e.g. "transaction.created".');
      }
      if (b.resourceId !== undefined && b.resourceId !== null && typeof b.resourceId !== "string") {
        bad("resourceId must be a string.");
      }
      const count = b.count === undefined ? 1 : b.count;
      if (!Number.isInteger(count) || (count as number) < 1 || (count as number) > 10_000) {
        bad(`count must be a whole number from 1 to 10000, got ${JSON.stringify(b.count)}.`);
      }
      if (b.data !== undefined && (typeof b.data !== "object" || b.data === null)) {
        bad("data must be a JSON object.");
      }
      const events = Array.from({ length: count as number }, () => ({
        eventType: b.eventType as string,
        resourceId: (b.resourceId as string | undefined) ?? null,
        data: b.data ?? {},
      }));
      return { status: 201, body: { data: engine.publishMany(events) } };
    }
    if (seg[1] === "attempts" && seg.length === 2 && m === "GET") {
      const webhookId = q.get("webhookId");
      const rows = (webhookId
        ? engine.store.stmt("SELECT * FROM wh_attempts WHERE webhook_id = ? ORDER BY seq").all(
          webhookId,
        )
        : engine.store.stmt("SELECT * FROM wh_attempts ORDER BY seq").all()) as Record<
          string,
          unknown
        >[];
      return {
        status: 200,
        body: {
          data: rows.map((r) => {
            const o: Record<string, unknown> = {
              webhookId: r.webhook_id,
              notificationId: r.notification_id,
              sentTime: r.sent_time,
              duration: r.duration,
            };
            if (r.response_code !== null) {
              o.responseCode = r.response_code;
            }
            if (r.failure_reason !== null) {
              o.failureReason = r.failure_reason;
            }
            return o;
          }),
        },
      };
    }
    if (seg[1] === "outbox" && seg.length === 2 && m === "GET") {
      return {
        status: 200,
        body: {
          data: engine.store.outbox().map(({ to, subject, body, webhookId, createdAt }) => ({
            to,
            subject,
            body,
            webhookId,
            createdAt,
          })),
        },
      };
    }
    return null;
  }

  if (seg[0] !== "webhooks") return null;

  // /webhooks
  if (seg.length === 1) {
    if (m === "POST") {
      const b = obj(req.body, "create webhook");
      const url = checkUrl(b.url);
      const events = checkEvents(b.events);
      if (b.description !== undefined && typeof b.description !== "string") {
        bad("description must be a string.");
      }
      if (b.enabled !== undefined && typeof b.enabled !== "boolean") {
        bad("enabled must be true or false.");
      }
      const w = engine.createWebhook({
        url,
        events,
        description: b.description as string | undefined,
        enabled: b.enabled as boolean | undefined,
      });
      return { status: 201, body: webhookJson(w) };
    }
    if (m === "GET") {
      const order = orderParam(q, "DESC");
      const pageSize = intParam(q, "pageSize", 10, 1, 100);
      let after: number | null = null;
      const cur = q.get("pageCursor");
      if (cur) {
        try {
          const s = atob(cur.replace(/-/g, "+").replace(/_/g, "/"));
          after = JSON.parse(s).after;
          if (!Number.isInteger(after)) throw new Error();
        } catch {
          bad("pageCursor is not a cursor this emulator gave out; omit it to start again.");
        }
      }
      const rows = engine.store.webhookPage(order, after, pageSize + 1);
      const page = rows.slice(0, pageSize);
      const next = rows.length > pageSize
        ? base64url(JSON.stringify({ after: page[page.length - 1].seq }))
        : null;
      return { status: 200, body: { data: page.map(webhookJson), next } };
    }
    return null;
  }

  const webhookId = seg[1];

  // /webhooks/{id}
  if (seg.length === 2) {
    if (m === "GET") return { status: 200, body: webhookJson(engine.webhook(webhookId)) };
    if (m === "PATCH") {
      const b = obj(req.body, "update webhook");
      const patch: { url?: string; description?: string; events?: string[]; enabled?: boolean } =
        {};
      if (b.url !== undefined) patch.url = checkUrl(b.url);
      if (b.events !== undefined) patch.events = checkEvents(b.events);
      if (b.description !== undefined) {
        if (typeof b.description !== "string") bad("description must be a string.");
        patch.description = b.description;
      }
      if (b.enabled !== undefined) {
        if (typeof b.enabled !== "boolean") bad("enabled must be true or false.");
        patch.enabled = b.enabled;
      }
      return { status: 200, body: webhookJson(engine.updateWebhook(webhookId, patch)) };
    }
    if (m === "DELETE") return { status: 200, body: webhookJson(engine.deleteWebhook(webhookId)) };
    return null;
  }

  // /webhooks/{id}/metrics/LAST_ACTIVE_HOUR_ERROR_RATE
  if (seg[2] === "metrics" && seg.length === 4 && m === "GET") {
    if (seg[3] !== "LAST_ACTIVE_HOUR_ERROR_RATE") {
      throw new WebhookApiError(
        404,
        `Unknown metric ${JSON.stringify(seg[3])}: the one metric is LAST_ACTIVE_HOUR_ERROR_RATE.`,
        1003,
      );
    }
    return { status: 200, body: { value: engine.errorRatePercent(webhookId) } };
  }

  if (seg[2] !== "notifications") return null;

  // /webhooks/{id}/notifications
  if (seg.length === 3 && m === "GET") {
    engine.webhook(webhookId);
    const order = orderParam(q, "DESC");
    const sortBy = q.get("sortBy") || "updatedAt";
    const col = Object.hasOwn(SORT_COLUMNS, sortBy) ? SORT_COLUMNS[sortBy] : undefined;
    if (!col) {
      bad(
        `sortBy must be one of ${Object.keys(SORT_COLUMNS).join(", ")}, got ${
          JSON.stringify(sortBy)
        }.`,
      );
    }
    const pageSize = intParam(q, "pageSize", 100, 1, 100);
    const cursor = q.get("pageCursor");
    let seqs: number[];
    let next: string | null;
    let total: number | undefined;
    if (cursor) {
      try {
        ({ page: seqs, next } = pager.next(webhookId, cursor, pageSize));
      } catch (e) {
        bad((e as Error).message);
      }
    } else {
      const t = now();
      const startTime = timeParam(q, "startTime") ?? t - 31 * DAY;
      const endTime = timeParam(q, "endTime");
      const statuses = listParam(q, "statuses");
      for (const s of statuses) {
        if (!STATUSES.includes(s)) {
          bad(`statuses must be among ${STATUSES.join(", ")}, got ${JSON.stringify(s)}.`);
        }
      }
      const events = listParam(q, "events");
      const resourceId = q.get("resourceId");
      const where = ["webhook_id = ?", "created_at >= ?"];
      const args: (string | number)[] = [webhookId, startTime];
      if (endTime !== undefined) {
        where.push("created_at <= ?");
        args.push(endTime);
      }
      if (statuses.length) {
        where.push(`status IN (${statuses.map(() => "?").join(",")})`);
        args.push(...statuses);
      }
      if (events.length) {
        where.push(`event_type IN (${events.map(() => "?").join(",")})`);
        args.push(...events);
      }
      if (resourceId) {
        where.push("resource_id = ?");
        args.push(resourceId);
      }
      const all = engine.store.db.prepare(
        `SELECT seq FROM wh_notifications WHERE ${where.join(" AND ")}
         ORDER BY ${col} ${order}, seq ${order}`,
      ).all(...args).map((r) => (r as { seq: number }).seq);
      total = all.length;
      ({ page: seqs, next } = pager.first(webhookId, all, pageSize));
    }
    const data = seqs.map((s) => engine.store.notificationBySeq(s)).filter((n) => n !== undefined)
      .map((n) => notificationJson(n));
    const body: Record<string, unknown> = { data, next };
    if (total !== undefined) body.total = total;
    return { status: 200, body };
  }

  if (seg.length === 4 && m === "POST" && seg[3] === "resend_by_resource") {
    const b = obj(req.body, "resend by resource");
    if (typeof b.resourceId !== "string" || !b.resourceId) bad("resourceId is required.");
    const exclude = b.excludeStatuses === undefined
      ? undefined
      : checkStatuses(b.excludeStatuses, "excludeStatuses");
    engine.resendByResource(webhookId, b.resourceId, exclude);
    return { status: 202 };
  }

  if (seg.length === 4 && m === "POST" && seg[3] === "resend_failed") {
    const b = obj(req.body, "resend failed");
    if (
      b.startTime !== undefined && (!Number.isInteger(b.startTime) || (b.startTime as number) < 0)
    ) {
      bad("startTime must be epoch milliseconds.");
    }
    if (b.events !== undefined) checkEvents(b.events);
    const r = engine.resendFailed(webhookId, {
      startTime: b.startTime as number | undefined,
      events: b.events as string[] | undefined,
    });
    if (!r.job) return { status: 200, body: { total: 0 } };
    return {
      status: 202,
      body: { total: r.total },
      headers: {
        location: `/v1/webhooks/${
          encodeURIComponent(webhookId)
        }/notifications/resend_failed/jobs/${r.job.id}`,
      },
    };
  }

  if (seg.length === 6 && m === "GET" && seg[3] === "resend_failed" && seg[4] === "jobs") {
    const j = engine.job(webhookId, seg[5]);
    return {
      status: 200,
      body: { jobId: j.id, status: j.status, processed: j.processed, total: j.total },
    };
  }

  const notificationId = seg[3];
  if (seg.length === 4 && m === "GET") {
    const includeData = q.get("includeData") === "true";
    return {
      status: 200,
      body: notificationJson(engine.notification(webhookId, notificationId), includeData),
    };
  }
  if (seg.length === 5 && m === "POST" && seg[4] === "resend") {
    engine.resend(webhookId, notificationId);
    return { status: 202 };
  }
  if (seg.length === 5 && m === "GET" && seg[4] === "attempts") {
    const n = engine.notification(webhookId, notificationId);
    const pageSize = intParam(q, "pageSize", 10, 1, 100);
    let after = 0;
    const cur = q.get("pageCursor");
    if (cur) {
      try {
        after = JSON.parse(atob(cur.replace(/-/g, "+").replace(/_/g, "/"))).after;
        if (!Number.isInteger(after)) throw new Error();
      } catch {
        bad("pageCursor is not a cursor this emulator gave out; omit it to start again.");
      }
    }
    const rows = engine.store.attemptPage(n.id, after, pageSize + 1);
    const page = rows.slice(0, pageSize);
    const next = rows.length > pageSize
      ? base64url(JSON.stringify({ after: page[page.length - 1].seq }))
      : null;
    return { status: 200, body: { data: page.map(attemptJson), next } };
  }
  return null;
}

/** Turns a thrown error into the API's `{message, code}` answer (500 for the unexpected). */
export function errorResult(e: unknown): ApiResult {
  if (e instanceof WebhookApiError) {
    return { status: e.status, body: { message: e.message, code: e.code } };
  }
  return {
    status: 500,
    body: { message: `Internal emulator error: ${(e as Error)?.message ?? e}`, code: 5000 },
  };
}
