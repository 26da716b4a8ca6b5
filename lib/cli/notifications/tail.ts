/**
 * `service notifications tail`, in the spirit of `stripe logs tail`: the platform's
 * `NotificationTail` finds the changes, this command polls it and prints. A poll that fails in
 * a way worth a retry (the client's `isRetryable`) after the client's retries is reported on
 * standard error and the next poll goes on; any other error ends the command.
 *
 * @module
 */

import { leaf, platformApi } from "../command.ts";
import { webhookVerbFlags } from "../webhooks/common.ts";
import { whenStopped } from "../stop_signals.ts";
import { UsageError } from "../errors.ts";
import type { Column } from "../output.ts";
import { cells } from "../table.ts";

const COLUMNS: Column[] = [
  { header: "time", value: "time", width: 24 },
  { header: "change", value: "change", width: 7 },
  {
    header: "status",
    value: (r) => r.previousStatus ? `${r.previousStatus} -> ${r.status}` : String(r.status),
    width: 26,
  },
  { header: "eventType", value: "eventType", width: 26 },
  { header: "resourceId", value: (r) => (r.resourceId as string | null) ?? "-", width: 20 },
  { header: "id", value: "id" },
];

/** The `tail` verb. */
export const tailCommand = leaf({
  summary: "Show new notifications and status changes as they happen (--follow until Ctrl-C).",
  usage: "--webhookId W [--follow] [--since T] [--interval D]",
  description:
    "Polls the notification list every --interval (default 2s), newest updatedAt first, and\n" +
    "prints one line per new notification (created) or status change (status, with the previous\n" +
    "status). Without --follow: the changes since --since (default 1h), then exits. With\n" +
    "--follow: from --since (default now) on, until Ctrl-C.",
  flags: {
    ...webhookVerbFlags,
    follow: { type: "boolean", short: "f", description: "Keep polling until Ctrl-C." },
    since: {
      type: "time",
      placeholder: "TIME",
      description: "Changes at or after this time (default: 1h; with --follow: now).",
    },
    interval: {
      type: "duration",
      default: 2_000,
      min: 100,
      max: 600_000,
      placeholder: "DURATION",
      description: "Time between two polls.",
    },
  },
  examples: [
    "service notifications tail --webhookId $W --follow",
    "service notifications tail --webhookId $W --since 10m --format ndjson",
  ],
  async run({ flags }, ctx) {
    const webhookId = flags.webhookId;
    const clock = ctx.now ?? Date.now;
    const since = flags.since ?? (flags.follow ? clock() : clock() - 3_600_000);
    const { client, api } = await platformApi(flags, ctx);
    const out = ctx.out;
    const tail = new api.NotificationTail(client, webhookId, since);
    if (!flags.follow) {
      await out.records(await tail.poll() as unknown as Record<string, unknown>[], COLUMNS);
      return 0;
    }
    if (out.format === "json") {
      throw new UsageError(
        "--follow prints a line per change: use --format ndjson (or table), not json.",
      );
    }
    const release = ctx.takeSignals?.(["SIGINT", "SIGTERM"]) ?? (() => {});
    const stopped = whenStopped(ctx.signal);
    let stop: string | undefined;
    void stopped.then((why) => stop = why);
    await out.log(
      `following notifications of ${webhookId} since ${
        new Date(since).toISOString()
      } (every ${flags.interval} ms); Ctrl-C to stop`,
    );
    // The header now; rows as they come, at the widths it was given.
    const rows = out.format === "table" ? await out.table(COLUMNS) : undefined;
    try {
      while (stop === undefined) {
        try {
          const lines = await tail.poll();
          if (rows) {
            await rows(lines.map((l) => cells(COLUMNS, l as unknown as Record<string, unknown>)));
          } else if (lines.length) {
            await out.records(lines as unknown as Record<string, unknown>[], COLUMNS);
          }
        } catch (e) {
          if (!api.isRetryable(e)) throw e;
          await out.warn(`poll failed, trying again: ${(e as Error).message}`);
        }
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          stopped,
          new Promise((r) => timer = setTimeout(r, flags.interval)),
        ]);
        clearTimeout(timer);
      }
      await out.log(`stopped (${stop})`);
    } finally {
      release();
    }
    return 0;
  },
});
