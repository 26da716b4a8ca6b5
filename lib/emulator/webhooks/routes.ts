/**
 * The webhook side as one of the emulator's route modules: the Webhooks V2
 * routes (platform authentication), the admin routes (`/admin/...`, the
 * emulator's API key), the JWKS and console section through the context's
 * extension slots, and the event bus listener that turns the emulator's own
 * events (`transaction.created`, `transaction.status.updated`, ...) into
 * notifications.
 *
 * Admin endpoints (header `X-API-Key: <the emulator's API key>`; the
 * platform's signed JWT is accepted too, so `service emulator trigger` uses
 * the ordinary client):
 *
 * - `POST /admin/notifications` `{eventType, resourceId?, data?, count?}` →
 *   201 `{data: [{id, webhookId}]}`: `count` events (default 1, at most
 *   10 000); each makes one notification per ENABLED or SUSPENDED endpoint
 *   subscribed to `eventType` (suspended ones wait ON_HOLD).
 * - `GET /admin/attempts[?webhookId=W]` → 200 `{data: [{webhookId, notificationId,
 *   sentTime, duration, responseCode?, failureReason?}]}`: every attempt in the
 *   order it was recorded, i.e. a delivery log for `service breaker simulate`.
 * - `GET /admin/outbox` → 200 `{data: [{to, subject, body, webhookId, createdAt}]}`:
 *   the e-mails "sent" to the workspace admins (one per suspension and admin).
 *
 * @module
 */

import type { Route, RouteModule, RouteRequest } from "../http/router.ts";
import type { EmulatorContext } from "../context.ts";
import type { Reply } from "../http/reply.ts";
import { CONSOLE_SECTIONS, JWKS_PROVIDER } from "../console/page.ts";
import { startWebhooks, type Webhooks, type WebhooksOptions } from "./start.ts";

/** Extension key of the running {@linkcode Webhooks} (tests, other areas). */
export const WEBHOOKS_EXTENSION = "webhooks";
/** Extension key of extra {@linkcode WebhooksOptions} set by the command (delivery timeout, breaker). */
export const WEBHOOKS_OPTIONS_EXTENSION = "webhooks.options";

function webhooksOf(ctx: EmulatorContext): Webhooks {
  const w = ctx.extensions.get(WEBHOOKS_EXTENSION) as Webhooks | undefined;
  if (!w) throw new Error("the webhook side has not started");
  return w;
}

function handle(req: RouteRequest, ctx: EmulatorContext): Reply {
  const path = req.path.startsWith("/v1/") ? req.path.slice(3) : req.path;
  const r = webhooksOf(ctx).handle({
    method: req.method,
    path,
    query: req.query,
    body: req.body,
  });
  return r ??
    { status: 404, body: { message: `Not found: ${req.method} ${req.path}.`, code: 1003 } };
}

const api = (method: Route["method"], pattern: string): Route => ({
  method,
  pattern,
  auth: "api",
  handle,
});

const W = "/v1/webhooks/:webhookId";
const N = `${W}/notifications`;

/** The webhook side's routes, schema-less (its tables are created by its store), start and stop. */
export const webhooksRoutes: RouteModule = {
  name: "webhooks",
  routes: [
    api("GET", "/v1/webhooks"),
    api("POST", "/v1/webhooks"),
    api("GET", W),
    api("PATCH", W),
    api("DELETE", W),
    api("GET", `${W}/metrics/:metricName`),
    api("GET", N),
    api("POST", `${N}/resend_by_resource`),
    api("POST", `${N}/resend_failed`),
    api("GET", `${N}/resend_failed/jobs/:jobId`),
    api("GET", `${N}/:notificationId`),
    api("POST", `${N}/:notificationId/resend`),
    api("GET", `${N}/:notificationId/attempts`),
    { method: "POST", pattern: "/admin/notifications", auth: "admin", handle },
    { method: "GET", pattern: "/admin/outbox", auth: "admin", handle },
    { method: "GET", pattern: "/admin/attempts", auth: "admin", handle },
  ],
  async start(ctx) {
    const extra = (ctx.extensions.get(WEBHOOKS_OPTIONS_EXTENSION) ?? {}) as Partial<
      WebhooksOptions
    >;
    const webhooks = await startWebhooks({
      ...extra,
      db: ctx.store.db,
      timeScale: ctx.config.timeScale,
      log: (l) => ctx.log(l),
      now: () => ctx.now(),
    });
    ctx.extensions.set(WEBHOOKS_EXTENSION, webhooks);
    ctx.extensions.set(JWKS_PROVIDER, () => webhooks.jwks());
    const sections = (ctx.extensions.get(CONSOLE_SECTIONS) as (() => string)[] | undefined) ?? [];
    sections.push(() => webhooks.consoleHtml());
    ctx.extensions.set(CONSOLE_SECTIONS, sections);
    ctx.events.listen((e) => webhooks.emit(e));
  },
  async stop(ctx) {
    const w = ctx.extensions.get(WEBHOOKS_EXTENSION) as Webhooks | undefined;
    await w?.stop();
  },
};
