/**
 * `service emulator trigger`: creates notifications in a running emulator through its admin
 * endpoint (`POST /admin/notifications`), reached with the ordinary connection flags, so the
 * emulator's `ready` line is all it needs.
 *
 * @module
 */

import { connectionFlags, formatFlag, leaf, platformClient } from "./command.ts";
import { UsageError } from "./errors.ts";
import { WEBHOOK_EVENTS } from "../core/mod.ts";
import type { Column } from "./output.ts";

const COLUMNS: Column[] = [
  { header: "id", value: "id", width: 36 },
  { header: "webhookId", value: "webhookId", width: 36 },
];

/** `service emulator trigger --eventType E [--resourceId R] [--count N] [--data JSON]`. */
export const emulatorTriggerCommand = leaf({
  summary: "Create notifications in a running emulator (for testing receivers).",
  usage: "--eventType E [--resourceId R] [--count N] [--data JSON]",
  description:
    "Creates N events of type E in the emulator at --apiBaseUrl; each makes one notification\n" +
    "per webhook endpoint (ENABLED or SUSPENDED) subscribed to E, delivered like any other.\n" +
    "Prints the notification ids (one record per notification: id, webhookId).",
  flags: {
    ...connectionFlags,
    ...formatFlag,
    eventType: {
      type: "string",
      placeholder: "E",
      required: true,
      choices: WEBHOOK_EVENTS,
      description: "Event type, e.g. transaction.created (one of the platform's webhook events).",
    },
    resourceId: { type: "string", placeholder: "R", description: "The resource id (optional)." },
    count: {
      type: "integer",
      default: 1,
      min: 1,
      max: 10000,
      description: "How many events to create.",
    },
    data: { type: "string", placeholder: "JSON", description: "The events' data: a JSON object." },
  },
  examples: [
    "service emulator trigger --eventType transaction.created --resourceId tx-1",
    "service emulator trigger --eventType transaction.status.updated --count 100 --format ndjson",
    `service emulator trigger --eventType vault_account.created --data '{"id":"7"}'`,
  ],
  async run({ flags }, ctx) {
    let data: unknown = undefined;
    if (flags.data !== undefined) {
      try {
        data = JSON.parse(flags.data);
      } catch {
        throw new UsageError(
          `Invalid value for --data: not JSON. Give a JSON object, e.g. --data '{"a":1}'.`,
        );
      }
      if (typeof data !== "object" || data === null || Array.isArray(data)) {
        throw new UsageError(
          `Invalid value for --data: give a JSON object, e.g. --data '{"a":1}'.`,
        );
      }
    }
    const client = await platformClient(flags, ctx);
    const r = await client.request<{ data: { id: string; webhookId: string }[] }>(
      "POST",
      "/admin/notifications",
      {
        operation: `trigger ${flags.count} "${flags.eventType}" event(s) in the emulator`,
        // the admin endpoint keeps no Idempotency-Key: a retry could create the events twice
        retries: 0,
        noIdempotencyKey: true,
        body: {
          eventType: flags.eventType,
          resourceId: flags.resourceId,
          count: flags.count,
          data,
        },
      },
    );
    const rows = r.data?.data ?? [];
    if (rows.length === 0) {
      await ctx.out.warn(
        `No webhook endpoint is subscribed to "${flags.eventType}": nothing was created.`,
      );
    }
    await ctx.out.records(rows, COLUMNS);
    return 0;
  },
});
