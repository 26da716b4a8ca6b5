/**
 * What the `service webhooks` verbs share: the `--webhookId` flag (the one
 * declaration, which `service notifications` uses too) and the flags of a verb
 * about one endpoint, the table columns of
 * a webhook, and the checks of `--url` and `--events`.
 *
 * @module
 */

import type { Column } from "../output.ts";
import { UsageError } from "../errors.ts";
import { connectionFlags, formatFlag } from "../command.ts";

/**
 * `--webhookId` (also `SERVICE_WEBHOOK_ID`), required: the flag layer refuses
 * a command without it (`Missing --webhookId for "...": give --webhookId <ID>
 * or set SERVICE_WEBHOOK_ID.`).
 */
export const webhookIdFlag = {
  webhookId: {
    type: "string",
    env: "SERVICE_WEBHOOK_ID",
    placeholder: "ID",
    required: true,
    description: "The webhook endpoint's id.",
  },
} as const;

/** The flags of a verb about one endpoint: the connection, the format and `--webhookId`. */
export const webhookVerbFlags = { ...connectionFlags, ...formatFlag, ...webhookIdFlag } as const;

/** The table columns of a webhook. */
export const WEBHOOK_COLUMNS: Column[] = [
  { header: "id", value: "id", width: 36 },
  { header: "status", value: "status", width: 9 },
  {
    header: "events",
    value: (r) => (r.events as string[] | undefined)?.join(",") ?? "",
    width: 30,
  },
  { header: "url", value: "url" },
];

/** An endpoint URL: absolute http(s), or a usage error. */
export function checkEndpointUrl(url: string, flag = "--url"): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(
      `Invalid value for ${flag}: ${
        JSON.stringify(url)
      } is not a URL. Give e.g. https://example.com/hook.`,
    );
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new UsageError(
      `Invalid value for ${flag}: ${
        JSON.stringify(url)
      } is not http(s). Give e.g. https://example.com/hook.`,
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
