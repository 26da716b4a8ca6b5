/**
 * The console's JSON routes for the webhook side (`/console/api/webhooks...`),
 * what the console page (`../console/app_html.ts`) fetches and posts. The
 * error rate of an endpoint is the one of the `LAST_ACTIVE_HOUR_ERROR_RATE`
 * metric. Every route has `auth: "console"` (`../http/console_guard.ts`);
 * none takes the API key. Each handler checks its input and calls the
 * engine; no SQL here.
 *
 * @module
 */

import type { Route, RouteRequest } from "../http/router.ts";
import type { EmulatorContext } from "../context.ts";
import { json, type Reply } from "../http/reply.ts";
import { intParam, oneOf } from "../http/params.ts";
import { attemptJson, notificationJson, type NotificationRow, webhookJson } from "./rows.ts";
import type { Webhooks } from "./start.ts";
import { NOTIFICATION_STATUSES } from "../../core/mod.ts";

/** A handler of a webhook route: the request, the started webhook side, the context. */
export type Handler = (req: RouteRequest, w: Webhooks, ctx: EmulatorContext) => Reply;

/** A route of the webhook side (this file's and `routes.ts`'). */
export function webhooksRoute(
  method: Route["method"],
  pattern: string,
  auth: Route["auth"],
  h: Handler,
): Route {
  const handle: Route["handle"] = (req, ctx) => {
    if (!ctx.webhooks) throw new Error("the webhook side has not started");
    return h(req, ctx.webhooks, ctx);
  };
  return { method, pattern, auth, handle };
}

const route = (method: Route["method"], pattern: string, h: Handler) =>
  webhooksRoute(method, pattern, "console", h);

/** A notification as the console lists it (with its delivery progress). */
function consoleNotification(n: NotificationRow): Record<string, unknown> {
  const { attempts, lastSentTime } = n;
  const nextAttemptAt = n.status === "IN_PROGRESS" ? n.nextAttemptAt : null;
  return { ...notificationJson(n), attempts, lastSentTime, nextAttemptAt };
}

const DAY = 86_400_000;

const list: Handler = (_req, { engine }, ctx) =>
  json(200, {
    now: ctx.now(),
    timeScale: ctx.config.timeScale,
    windowMs: engine.breakerCfg.windowMs,
    data: engine.endpoints.all().map(({ row }) => ({
      ...webhookJson(row),
      recent: engine.endpoints.lastActiveWindow(row.id),
    })),
  });

const enable: Handler = (req, { engine }) =>
  json(200, webhookJson(engine.endpoints.update(req.params.webhookId, { enabled: true })));

const notifications: Handler = (req, { engine, queries }, ctx) => {
  const webhookId = req.params.webhookId;
  const q = req.query;
  const hook = engine.endpoints.row(webhookId);
  const status = oneOf(q, "status", NOTIFICATION_STATUSES) ?? "";
  const event = q.get("event") || "";
  const resourceId = (q.get("resourceId") || "").trim();
  const offset = intParam(q, "offset", 0, 0, Number.MAX_SAFE_INTEGER);
  const limit = intParam(q, "limit", 25, 1, 100);
  const seqs = queries.notificationSeqs({
    webhookId,
    startTime: ctx.now() - 31 * DAY,
    statuses: status ? [status] : [],
    events: event ? [event] : [],
    resourceId: resourceId || null,
    sortBy: "createdAt",
    order: "DESC",
  });
  const data = queries.notifications(seqs.slice(offset, offset + limit)).map(consoleNotification);
  return json(200, { data, total: seqs.length, offset, limit, events: hook.events });
};

const notification: Handler = (req, { engine, queries }) => {
  const n = engine.resends.notification(req.params.webhookId, req.params.notificationId);
  return json(200, {
    ...consoleNotification(n),
    attemptLog: queries.attemptsOf(n.id).map(attemptJson),
  });
};

const resend: Handler = (req, { engine }) => {
  engine.resends.resend(req.params.webhookId, req.params.notificationId);
  return json(202, { resent: 1 });
};

const recentCount: Handler = (req, { engine }) =>
  json(200, { count: engine.resends.resendRecent(req.params.webhookId, { dryRun: true }) });

const resendRecent: Handler = (req, { engine }) =>
  json(202, { resent: engine.resends.resendRecent(req.params.webhookId) });

const W = "/console/api/webhooks/:webhookId";

/** The console's webhook routes (added to the webhook side's route module). */
export const webhooksConsoleRoutes: Route[] = [
  route("GET", "/console/api/webhooks", list),
  route("POST", `${W}/enable`, enable),
  route("GET", `${W}/notifications`, notifications),
  route("GET", `${W}/notifications/:notificationId`, notification),
  route("POST", `${W}/notifications/:notificationId/resend`, resend),
  route("GET", `${W}/resend_recent`, recentCount),
  route("POST", `${W}/resend_recent`, resendRecent),
];
