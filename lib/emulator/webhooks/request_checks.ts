/**
 * Checks of what only a Webhooks V2 request carries (endpoint URLs, event
 * types, notification statuses; the query parameters every area reads are
 * in `../http/params.ts`); each failure is a 400 `{message, code: 1000}`
 * that names the value and what is expected.
 *
 * @module
 */

import { NOTIFICATION_STATUSES, type NotificationStatus, WEBHOOK_EVENTS } from "../../core/mod.ts";
import { bad } from "../http/params.ts";

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
  const u = URL.parse(v) ?? bad(`url ${JSON.stringify(v)} is not a valid URL.`);
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
