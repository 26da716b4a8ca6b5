/**
 * `service notifications tail --webhookId W [--follow] [--since T]
 * [--interval D]`: a webhook's new notifications and status changes as they
 * happen, one line each (`--format ndjson` for programs), in the spirit of
 * `stripe logs tail`.
 *
 * The API has no event stream, so this polls the list endpoint every
 * `--interval` (default 2 s) sorted by `updatedAt`, newest first, reading
 * pages only back to what the previous poll saw (less 5 s of slack for
 * clocks and equal timestamps). A notification not seen before gives a
 * `created` line (or `updated` when it was created before `--since`); one
 * whose status differs from the last seen gives a `status` line with
 * `previousStatus`. Lines come in `updatedAt` order.
 *
 * Without `--follow`: what changed since `--since` (default 1h), then exit.
 * With `--follow`: from `--since` (default: now) on, until Ctrl-C (exit 0).
 * A poll that fails in a way worth a retry (unreachable, timed out, or
 * 408/429/5xx: the client's `isRetryable`) after the client's retries is reported on standard error and the next
 * poll goes on; any other error ends the command.
 *
 * @module
 */

import { connectionFlags, formatFlag, leaf, platformClient } from "../command.ts";
import { webhookIdFlag } from "../webhooks/common.ts";
import { whenStopped } from "../stop_signals.ts";
import { UsageError } from "../errors.ts";
import type { Column } from "../output.ts";
import { cells } from "../table.ts";

const SLACK_MS = 5_000;
const KEEP_MS = 10 * 60_000;

/** One line of `tail`. */
export interface TailLine {
  /** `created` (first seen), `status` (its status changed) or `updated` (first seen, older). */
  change: "created" | "status" | "updated";
  /** `updatedAt` as ISO 8601. */
  time: string;
  /** The notification's id. */
  id: string;
  /** The endpoint. */
  webhookId: string;
  /** Its event type. */
  eventType: string;
  /** Its resource, if any. */
  resourceId: string | null;
  /** Its status now. */
  status: string;
  /** The status seen before, for `status` lines. */
  previousStatus?: string;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms. */
  updatedAt: number;
}

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
    ...connectionFlags,
    ...formatFlag,
    ...webhookIdFlag,
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
    const client = await platformClient(flags, ctx);
    const api = await import("../../platform/mod.ts");
    const out = ctx.out;
    const seen = new Map<string, { status: string; updatedAt: number }>();
    let watermark = since;

    const poll = async (): Promise<TailLine[]> => {
      const fresh: TailLine[] = [];
      const floor = watermark - SLACK_MS;
      for await (
        const n of api.listNotifications(client, webhookId, {
          sortBy: "updatedAt",
          order: "DESC",
          pageSize: 100,
        })
      ) {
        const updatedAt = n.updatedAt ?? n.createdAt ?? 0;
        if (updatedAt < floor) break;
        if (updatedAt < since) continue;
        const before = seen.get(n.id);
        if (before && before.status === n.status) continue;
        const createdAt = n.createdAt ?? updatedAt;
        const line = (
          change: TailLine["change"],
          status: string,
          at: number,
          previousStatus?: string,
        ): TailLine => ({
          change,
          time: new Date(at).toISOString(),
          id: n.id,
          webhookId,
          eventType: n.eventType,
          resourceId: n.resourceId ?? null,
          status,
          ...(previousStatus ? { previousStatus } : {}),
          createdAt,
          updatedAt: at,
        });
        if (
          !before && createdAt >= since && updatedAt > createdAt &&
          (n.status === "COMPLETED" || n.status === "FAILED")
        ) {
          // Created and delivered between two polls (or before a one-shot tail): both changes.
          // A notification reaches COMPLETED or FAILED only from IN_PROGRESS (deliveries are
          // made to IN_PROGRESS ones), the status a notification is created with.
          fresh.push(line("created", "IN_PROGRESS", createdAt));
          fresh.push(line("status", n.status, updatedAt, "IN_PROGRESS"));
          continue;
        }
        const change: TailLine["change"] = before
          ? "status"
          : createdAt >= since
          ? "created"
          : "updated";
        fresh.push(line(change, n.status, updatedAt, before?.status));
      }
      fresh.sort((a, b) => a.updatedAt - b.updatedAt || a.createdAt - b.createdAt);
      for (const l of fresh) {
        seen.set(l.id, { status: l.status, updatedAt: l.updatedAt });
        if (l.updatedAt > watermark) watermark = l.updatedAt;
      }
      for (const [id, s] of seen) if (s.updatedAt < watermark - KEEP_MS) seen.delete(id);
      return fresh;
    };

    if (!flags.follow) {
      await out.records(await poll() as unknown as Record<string, unknown>[], COLUMNS);
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
          const lines = await poll();
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
