/**
 * Checks of what a Webhooks V2 request carries (query parameters and JSON
 * bodies); each failure is a 400 `{message, code: 1000}` that names the
 * value and what is expected.
 *
 * @module
 */

import {
  BadRequestError,
  NOTIFICATION_STATUSES,
  type NotificationStatus,
  WEBHOOK_EVENTS,
} from "../../core/mod.ts";

/**
 * Throws the 400 answer with `message`.
 *
 * @example
 * ```ts
 * bad("resourceId is required.");
 * ```
 */
export function bad(message: string): never {
  throw new BadRequestError(message);
}

/**
 * A whole-number query parameter within [min, max], `def` when absent.
 *
 * @example
 * ```ts
 * const query = new URLSearchParams("pageSize=50");
 * intParam(query, "pageSize", 10, 1, 100);
 * ```
 */
export function intParam(
  q: URLSearchParams,
  name: string,
  def: number,
  min: number,
  max: number,
): number {
  const v = q.get(name);
  if (v === null || v === "") return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) {
    bad(`${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(v)}.`);
  }
  return n;
}

/**
 * An epoch-milliseconds query parameter, `undefined` when absent.
 *
 * @example
 * ```ts
 * const query = new URLSearchParams("startTime=1767225600000");
 * timeParam(query, "startTime");
 * ```
 */
export function timeParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) {
    bad(`${name} must be epoch milliseconds (a whole number), got ${JSON.stringify(v)}.`);
  }
  return n;
}

/**
 * The `order` query parameter (`ASC` or `DESC`), `def` when absent.
 *
 * @example
 * ```ts
 * const query = new URLSearchParams("order=ASC");
 * orderParam(query, "DESC");
 * ```
 */
export function orderParam(q: URLSearchParams, def: "ASC" | "DESC"): "ASC" | "DESC" {
  const v = q.get("order");
  if (v === null || v === "") return def;
  if (v !== "ASC" && v !== "DESC") bad(`order must be ASC or DESC, got ${JSON.stringify(v)}.`);
  return v;
}

/**
 * A list query parameter: repeated keys, also accepting one comma-separated value.
 *
 * @example
 * ```ts
 * listParam(new URLSearchParams("events=a,b&events=c"), "events"); // ["a", "b", "c"]
 * ```
 */
export function listParam(q: URLSearchParams, name: string): string[] {
  return q.getAll(name).flatMap((v) => v.split(",")).map((s) => s.trim()).filter(Boolean);
}

/**
 * The JSON body as an object (`{}` when there was none).
 *
 * @example
 * ```ts
 * import type { RouteRequest } from "../http/router.ts";
 * declare const req: RouteRequest;
 * const b = bodyObject(req.body, "create webhook");
 * ```
 */
export function bodyObject(body: unknown, what: string): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== "object" || Array.isArray(body)) {
    bad(`${what}: the body must be a JSON object.`);
  }
  return body as Record<string, unknown>;
}

/**
 * An endpoint URL: an http(s) URL string.
 *
 * @example
 * ```ts
 * checkUrl("http://127.0.0.1:8080/hook");
 * ```
 */
export function checkUrl(v: unknown): string {
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

/**
 * A non-empty array of event types of the platform's enum
 * (`WEBHOOK_EVENTS`), without repeats; `name` is the field checked.
 *
 * @example
 * ```ts
 * checkEvents(["transaction.created", "transaction.created"]); // ["transaction.created"]
 * ```
 */
export function checkEvents(v: unknown, name = "events", allowEmpty = false): string[] {
  if (
    !Array.isArray(v) || (!allowEmpty && v.length === 0) ||
    !v.every((e) => typeof e === "string" && e)
  ) {
    bad(
      `${name} must be a${
        allowEmpty ? "n" : " non-empty"
      } array of event types, e.g. ["transaction.created"].`,
    );
  }
  const unknown = (v as string[]).filter((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
  if (unknown.length) {
    bad(
      `${name} has ${unknown.map((e) => JSON.stringify(e)).join(", ")}, not an event type of the ` +
        `platform; the allowed events are ${WEBHOOK_EVENTS.join(", ")}.`,
    );
  }
  return [...new Set(v as string[])];
}

/**
 * Whether `s` is a notification status.
 *
 * @example
 * ```ts
 * isNotificationStatus("ON_HOLD"); // true
 * ```
 */
export function isNotificationStatus(s: unknown): s is NotificationStatus {
  return (NOTIFICATION_STATUSES as readonly unknown[]).includes(s);
}

/**
 * An array of notification statuses (body field `name`).
 *
 * @example
 * ```ts
 * checkStatuses(["COMPLETED"], "excludeStatuses");
 * ```
 */
export function checkStatuses(v: unknown, name: string): NotificationStatus[] {
  if (!Array.isArray(v) || !v.every(isNotificationStatus)) {
    bad(`${name} must be an array of ${NOTIFICATION_STATUSES.join(", ")}.`);
  }
  return v as NotificationStatus[];
}
