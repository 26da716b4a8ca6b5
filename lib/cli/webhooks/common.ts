/**
 * What the `service webhooks` and `notifications` verbs share: the `--webhookId` flag (the one
 * declaration), the flags of a verb about one endpoint, and the checks of `--url` and `--events`.
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { connectionFlags, formatFlag } from "../command.ts";

/**
 * The flags of a verb about one endpoint: the connection, the format and `--webhookId` (also
 * `SERVICE_WEBHOOK_ID`), required: the flag layer refuses a command without it (`Missing
 * --webhookId for "...": give --webhookId <ID> or set SERVICE_WEBHOOK_ID.`).
 */
export const webhookVerbFlags = {
  ...connectionFlags,
  ...formatFlag,
  webhookId: {
    type: "string",
    env: "SERVICE_WEBHOOK_ID",
    placeholder: "ID",
    required: true,
    description: "The webhook endpoint's id.",
  },
} as const;

/** `--idempotencyKey` of a verb that creates something on the platform. */
export const idempotencyFlag = {
  idempotencyKey: {
    type: "string",
    placeholder: "KEY",
    description:
      "Idempotency-Key to send (default: a fresh UUID, reused by this command's retries).",
  },
} as const;

/** `--event TYPE`, repeatable: a filter of notification listings and resends. */
export const eventFlag = {
  event: {
    type: "string",
    multiple: true,
    placeholder: "TYPE",
    description: "Only this event type.",
  },
} as const;

/** An endpoint URL: absolute http(s), or a usage error. */
export function checkEndpointUrl(url: string, flag = "--url"): string {
  const protocol = URL.parse(url)?.protocol ?? "";
  if (protocol !== "http:" && protocol !== "https:") {
    throw new UsageError(
      `Invalid value for ${flag}: ${JSON.stringify(url)} is not ${
        protocol ? "http(s)" : "a URL"
      }. Give e.g. https://example.com/hook.`,
    );
  }
  return url;
}

/** Event types from `--events E1,E2`: non-empty, no blanks, no duplicates. */
export function checkEvents(events: readonly string[] | undefined, path: string): string[] {
  const list = (events ?? []).map((e) => e.trim());
  if (list.length === 0 || list.some((e) => e === "")) {
    throw new UsageError(
      `Missing --events for "${path}": give event types, e.g. --events transaction.created,transaction.status.updated.`,
    );
  }
  return [...new Set(list)];
}
