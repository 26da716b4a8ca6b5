/**
 * The webhook side's HTTP surface as ordinary routes of the emulator's one
 * router: the Webhooks V2 API (`platform-api.md`), the two V1 resends the
 * older SDKs still make (answered over the V2 endpoints: the emulator has no
 * V1 webhooks of its own), the admin endpoints (`/admin/notifications`,
 * `/admin/attempts`: the delivery log `service breaker simulate` reads as it
 * is, `/admin/outbox`) and the console's JSON routes (`console_routes.ts`).
 * docs/emulator.md is the reference of each. A handler checks its input,
 * calls the engine and shapes the answer; errors are domain errors, answered
 * by the emulator's handler like every other area. No SQL here.
 *
 * @module
 */

import type { RouteModule } from "../http/router.ts";
import { json, type Reply } from "../http/reply.ts";
import { cursorInt, encodeCursor } from "../http/cursor.ts";
import { startWebhooks } from "./start.ts";
import { type Handler, webhooksConsoleRoutes, webhooksRoute } from "./console_routes.ts";
import { checkEvents, checkStatuses, checkUrl, isNotificationStatus } from "./request_checks.ts";
import { bad, bodyObject, intParam, listParam, oneOf, timeParam } from "../http/params.ts";
import {
  attemptJson,
  deliveryLogJson,
  jobJson,
  type JobRow,
  notificationJson,
  webhookJson,
} from "./rows.ts";
import type { SeqPage } from "./store.ts";
import { NotFoundError, NOTIFICATION_SORT_FIELDS, NOTIFICATION_STATUSES } from "../../core/mod.ts";
import type { WebhookPatch } from "./endpoints.ts";

const DAY = 86_400_000;
const ORDERS = ["ASC", "DESC"] as const;

/** The `seq` the query's `pageCursor` continues after; `null` without one. */
function cursorAfter(q: URLSearchParams): number | null {
  const cur = q.get("pageCursor");
  return cur ? cursorInt("pageCursor", cur, "after") : null;
}

/** A page as `{data, next}`, `next` the cursor of the page after it (`null` at the end). */
function pageReply<T>({ rows, nextAfter }: SeqPage<T>, view: (row: T) => unknown): Reply {
  const next = nextAfter === null ? null : encodeCursor({ after: nextAfter });
  return json(200, { data: rows.map(view), next });
}

const route = webhooksRoute;

// ---------------------------------------------------------------- endpoints

const listWebhooks: Handler = (req, { queries }) => {
  const q = req.query;
  const order = oneOf(q, "order", ORDERS) ?? "DESC";
  const pageSize = intParam(q, "pageSize", 10, 1, 100);
  return pageReply(queries.webhookPage(order, cursorAfter(q), pageSize), webhookJson);
};

/** The fields of a create (`url` and `events` required) or update body, checked. */
function webhookFields(body: unknown, create: boolean): WebhookPatch {
  const b = bodyObject(body, create ? "create webhook" : "update webhook");
  const patch: WebhookPatch = {};
  if (create || b.url !== undefined) patch.url = checkUrl(b.url);
  if (create || b.events !== undefined) patch.events = checkEvents(b.events);
  if (b.description !== undefined) {
    if (typeof b.description !== "string") bad("description must be a string.");
    patch.description = b.description;
  }
  if (b.enabled !== undefined) {
    if (typeof b.enabled !== "boolean") bad("enabled must be true or false.");
    patch.enabled = b.enabled;
  }
  return patch;
}

const createWebhook: Handler = (req, { engine }) => {
  const { url, events, ...rest } = webhookFields(req.body, true);
  return json(201, webhookJson(engine.endpoints.create({ url: url!, events: events!, ...rest })));
};

const getWebhook: Handler = (req, { engine }) =>
  json(200, webhookJson(engine.endpoints.row(req.params.webhookId)));

const updateWebhook: Handler = (req, { engine }) => {
  const patch = webhookFields(req.body, false);
  return json(200, webhookJson(engine.endpoints.update(req.params.webhookId, patch)));
};

const deleteWebhook: Handler = (req, { engine }) =>
  json(200, webhookJson(engine.endpoints.delete(req.params.webhookId)));

const metric: Handler = (req, { engine }) => {
  const name = req.params.metricName;
  if (name !== "LAST_ACTIVE_HOUR_ERROR_RATE") {
    throw new NotFoundError(
      `Unknown metric ${JSON.stringify(name)}: the one metric is LAST_ACTIVE_HOUR_ERROR_RATE.`,
    );
  }
  const { rate } = engine.endpoints.lastActiveWindow(req.params.webhookId);
  return json(200, { value: String(Math.round(rate * 100)) });
};

// ---------------------------------------------------------------- notifications

const listNotifications: Handler = (req, { engine, pager, queries }, ctx) => {
  const webhookId = req.params.webhookId;
  const q = req.query;
  engine.endpoints.row(webhookId);
  const order = oneOf(q, "order", ORDERS) ?? "DESC";
  const sortBy = oneOf(q, "sortBy", NOTIFICATION_SORT_FIELDS) ?? "updatedAt";
  const pageSize = intParam(q, "pageSize", 100, 1, 100);
  const cursor = q.get("pageCursor");
  const view = (seqs: number[]) => queries.notifications(seqs).map((n) => notificationJson(n));
  if (cursor) {
    const { page, next } = pager.next(webhookId, cursor, pageSize); // a 400 for a bad cursor
    return json(200, { data: view(page), next });
  }
  const startTime = timeParam(q, "startTime") ?? ctx.now() - 31 * DAY;
  const endTime = timeParam(q, "endTime");
  const statuses = listParam(q, "statuses");
  for (const s of statuses) {
    if (!isNotificationStatus(s)) {
      bad(`statuses must be among ${NOTIFICATION_STATUSES.join(", ")}, got ${JSON.stringify(s)}.`);
    }
  }
  const all = queries.notificationSeqs({
    webhookId,
    startTime,
    endTime,
    statuses,
    events: listParam(q, "events"),
    resourceId: q.get("resourceId"),
    sortBy,
    order,
  });
  const { page, next } = pager.first(webhookId, all, pageSize);
  return json(200, { data: view(page), next, total: all.length });
};

const getNotification: Handler = (req, { engine }) => {
  const n = engine.resends.notification(req.params.webhookId, req.params.notificationId);
  return json(200, notificationJson(n, req.query.get("includeData") === "true"));
};

const listAttempts: Handler = (req, { engine, queries }) => {
  const n = engine.resends.notification(req.params.webhookId, req.params.notificationId);
  const pageSize = intParam(req.query, "pageSize", 10, 1, 100);
  return pageReply(queries.attemptPage(n.id, cursorAfter(req.query) ?? 0, pageSize), attemptJson);
};

// ---------------------------------------------------------------- resends

const resendNotification: Handler = (req, { engine }) => {
  engine.resends.resend(req.params.webhookId, req.params.notificationId);
  return { status: 202 };
};

const resendByResource: Handler = (req, { engine }) => {
  const b = bodyObject(req.body, "resend by resource");
  if (typeof b.resourceId !== "string" || !b.resourceId) bad("resourceId is required.");
  const exclude = b.excludeStatuses === undefined
    ? undefined
    : checkStatuses(b.excludeStatuses, "excludeStatuses");
  engine.resends.resendByResource(req.params.webhookId, b.resourceId, exclude);
  return { status: 202 };
};

/** Body field `k`: epoch milliseconds, `undefined` when absent. */
function epochField(b: Record<string, unknown>, k: string): number | undefined {
  const v = b[k];
  if (v !== undefined && (!Number.isInteger(v) || (v as number) < 0)) {
    bad(`${k} must be epoch milliseconds, got ${JSON.stringify(v)}.`);
  }
  return v as number | undefined;
}

/** A resend's answer: 200 `{total: 0}` when nothing is resent, else 202 and the job's address. */
function jobReply(webhookId: string, call: string, r: { total: number; job?: JobRow }): Reply {
  if (!r.job) return json(200, { total: 0 });
  const id = encodeURIComponent(webhookId);
  return json(202, { total: r.total }, {
    location: `/v1/webhooks/${id}/notifications/${call}/jobs/${r.job.id}`,
  });
}

const resendFailed: Handler = (req, { engine }) => {
  const b = bodyObject(req.body, "resend failed");
  const startTime = epochField(b, "startTime");
  if (b.events !== undefined) checkEvents(b.events);
  const events = b.events as string[] | undefined;
  const r = engine.resends.resendFailed(req.params.webhookId, { startTime, events });
  return jobReply(req.params.webhookId, "resend_failed", r);
};

const resendByQuery: Handler = (req, { engine }) => {
  const b = bodyObject(req.body, "resend by query");
  const startTime = epochField(b, "startTime");
  const endTime = epochField(b, "endTime");
  if (b.resourceId !== undefined && typeof b.resourceId !== "string") {
    bad("resourceId must be a string.");
  }
  const r = engine.resends.resendByQuery(req.params.webhookId, {
    statuses: b.statuses === undefined ? undefined : checkStatuses(b.statuses, "statuses"),
    events: b.events === undefined ? undefined : checkEvents(b.events, "events", true),
    startTime,
    endTime,
    resourceId: (b.resourceId as string | undefined) || undefined,
  });
  return jobReply(req.params.webhookId, "resend_by_query", r);
};

/** The status of a resend job made by the call `kind`. */
const getJob = (kind: JobRow["kind"]): Handler => (req, { engine }) =>
  json(200, jobJson(engine.resends.job(req.params.webhookId, req.params.jobId, kind)));

// ---------------------------------------------------------------- admin

const createNotifications: Handler = (req, { engine }) => {
  const b = bodyObject(req.body, "create notifications");
  if (typeof b.eventType !== "string" || !b.eventType) {
    bad('eventType is required, e.g. "transaction.created".');
  }
  // one of the platform's events, as a webhook subscribes to them
  checkEvents([b.eventType], "eventType");
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
    resourceId: (b.resourceId as string | null) ?? undefined,
    data: b.data ?? {},
  }));
  return json(201, { data: engine.publishMany(events) });
};

const attemptLog: Handler = (req, { queries }) =>
  json(200, {
    data: queries.deliveryLog(req.query.get("webhookId") || undefined).map(deliveryLogJson),
  });

const outbox: Handler = (_req, { queries }) => json(200, { data: queries.outbox() });

// ---------------------------------------------------------------- the V1 resends

// both SDKs' names of the count: the TypeScript SDK's messagesCount, the older SDK's webhooksCount
const resendV1: Handler = (_req, { engine }) => {
  let count = 0;
  for (const { row } of engine.endpoints.all()) {
    count += engine.resends.resendFailed(row.id, {}).total;
  }
  return json(200, { messagesCount: count, webhooksCount: count });
};

// `success` (the TypeScript SDK requires it) and `webhooksCount` (the older SDK's answer)
const resendTransactionV1: Handler = (req, { engine }, ctx) => {
  const txId = req.params.txId;
  if (!ctx.transactions.records.record(txId)) {
    throw new NotFoundError(`Transaction ${JSON.stringify(txId)} not found.`);
  }
  const b = bodyObject(req.body, "resend transaction webhooks");
  for (const k of ["resendCreated", "resendStatusUpdated"] as const) {
    if (b[k] !== undefined && typeof b[k] !== "boolean") bad(`${k} must be true or false.`);
  }
  const events = [
    ...(b.resendCreated === true ? ["transaction.created"] : []),
    ...(b.resendStatusUpdated === true ? ["transaction.status.updated"] : []),
  ];
  if (events.length === 0) {
    bad("Set resendCreated or resendStatusUpdated (or both) to true: nothing to resend.");
  }
  let count = 0;
  for (const { row } of engine.endpoints.all()) {
    count += engine.resends.resendByResource(row.id, txId, [], events);
  }
  return json(200, { success: true, webhooksCount: count });
};

// ---------------------------------------------------------------- the module

const W = "/v1/webhooks/:webhookId";
const N = `${W}/notifications`;

/** The webhook side's routes, start and stop. */
export const webhooksRoutes: RouteModule = {
  name: "webhooks",
  routes: [
    route("GET", "/v1/webhooks", "api", listWebhooks),
    route("POST", "/v1/webhooks", "api", createWebhook),
    route("GET", W, "api", getWebhook),
    route("PATCH", W, "api", updateWebhook),
    route("DELETE", W, "api", deleteWebhook),
    route("GET", `${W}/metrics/:metricName`, "api", metric),
    route("GET", N, "api", listNotifications),
    route("POST", `${N}/resend_by_resource`, "api", resendByResource),
    route("POST", `${N}/resend_failed`, "api", resendFailed),
    route("GET", `${N}/resend_failed/jobs/:jobId`, "api", getJob("failed")),
    route("POST", `${N}/resend_by_query`, "api", resendByQuery),
    route("GET", `${N}/resend_by_query/jobs/:jobId`, "api", getJob("query")),
    route("GET", `${N}/:notificationId`, "api", getNotification),
    route("POST", `${N}/:notificationId/resend`, "api", resendNotification),
    route("GET", `${N}/:notificationId/attempts`, "api", listAttempts),
    route("POST", "/admin/notifications", "admin", createNotifications),
    route("GET", "/admin/outbox", "admin", outbox),
    route("GET", "/admin/attempts", "admin", attemptLog),
    route("POST", "/v1/webhooks/resend", "api", resendV1),
    route("POST", "/v1/webhooks/resend/:txId", "api", resendTransactionV1),
    ...webhooksConsoleRoutes,
  ],
  async start(ctx) {
    const webhooks = await startWebhooks({
      ...ctx.config.webhooks,
      store: ctx.store,
      timeScale: ctx.config.timeScale,
      log: (l) => ctx.log(l),
      now: () => ctx.now(),
      consoleUrl: () => ctx.baseUrl === undefined ? undefined : `${ctx.baseUrl}/console`,
    });
    ctx.webhooks = webhooks;
    ctx.events.listen((e) => void webhooks.engine.publish(e));
  },
  async stop(ctx) {
    await ctx.webhooks?.engine.stop();
  },
};
