/**
 * `service notifications resend-all --webhookId W [--since 24h] [--dryRun]
 * [--idempotencyKey K] [--concurrency N]`: the platform console's "Resend
 * notifications" (seed 4.5): every notification of the endpoint created
 * since the given time (default the last 24 hours), whatever its status
 * (COMPLETED, FAILED, IN_PROGRESS, ON_HOLD).
 *
 * The API has no bulk operation for this (`resend_failed` takes FAILED only,
 * `resend_by_resource` one resource), so the command lists the window's
 * notifications first, then resends each one with Resend Notification, at
 * most `--concurrency` at a time; the platform client retries 5xx, 429 and
 * network errors, honouring `Retry-After`.
 *
 * Each notification's `Idempotency-Key` is derived from a run key, the
 * webhook id and the notification id (a SHA-256, written as a UUID), so a run
 * that is interrupted and started again with the same run key does not
 * resend twice what the first one sent: the platform answers the repeated
 * keys from its idempotency record (24 hours). The run key is `--idempotencyKey`,
 * else the webhook id with the window's start rounded down to the hour (so
 * a re-run in the same hour with the same `--since` continues the first);
 * it is printed on standard error, and an interrupted run says how to go
 * on. Repeats the platform flags (`Idempotent-Replayed: true`, as the
 * emulator does) are reported as "already resent".
 *
 * @module
 */

import { connectionFlags, formatFlag, leaf, platformClient } from "../command.ts";
import { CliError, UsageError } from "../errors.ts";
import { whenStopped } from "../stop_signals.ts";
import { webhookIdFlag } from "../webhooks/common.ts";
import { NOTIFICATION_STATUSES, toHex } from "../../core/mod.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The `Idempotency-Key` of one notification's resend in a run: a SHA-256 of
 * the run key, the webhook id and the notification id, written as a UUID.
 *
 * @example
 * ```ts
 * await resendKey("w1:2026-01-01T00:00:00.000Z", "w1", "n1"); // "1f0c...-...."
 * ```
 */
export async function resendKey(runKey: string, webhookId: string, id: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`service notifications resend-all\n${runKey}\n${webhookId}\n${id}`),
  );
  const h = toHex(new Uint8Array(digest));
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${
    ((parseInt(h[16], 16) & 3) | 8).toString(16)
  }${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The default run key: the webhook and the window's start, rounded down to the hour. */
export function defaultRunKey(webhookId: string, since: number): string {
  return `${webhookId}:${new Date(Math.floor(since / HOUR) * HOUR).toISOString()}`;
}

/** The `resend-all` verb. */
export const resendAllCommand = leaf({
  summary: "Resend every notification (any status) of the last 24 hours, or since --since.",
  usage: "--webhookId W [--since 24h] [--dryRun] [--idempotencyKey K] [--concurrency N]",
  description:
    "Every status is included: COMPLETED, FAILED, IN_PROGRESS and ON_HOLD (the console's\n" +
    '"Resend notifications"). Lists the window first, then resends one by one (no bulk API),\n' +
    "--concurrency at a time; reports how many were resent. --dryRun counts and resends nothing.\n" +
    "Each resend's Idempotency-Key comes from the run key (--idempotencyKey, else the webhook and\n" +
    "the window's start hour), so an interrupted run started again does not resend twice.",
  flags: {
    ...connectionFlags,
    ...formatFlag,
    ...webhookIdFlag,
    since: {
      type: "time",
      placeholder: "TIME",
      description: "Created at or after (default 24h: the last 24 hours; at most 30d).",
    },
    dryRun: { type: "boolean", description: "Count what would be resent; resend nothing." },
    idempotencyKey: {
      type: "string",
      placeholder: "KEY",
      description: "The run key the per-notification keys come from (to continue a run).",
    },
    concurrency: {
      type: "integer",
      default: 4,
      min: 1,
      max: 32,
      description: "Resends in flight at once.",
    },
  },
  examples: [
    "service notifications resend-all --webhookId $W --dryRun --format json",
    "service notifications resend-all --webhookId $W --since 6h",
  ],
  async run({ flags, given }, ctx) {
    const webhookId = flags.webhookId;
    const now = ctx.now?.() ?? Date.now();
    const since = flags.since ?? now - DAY;
    if (since < now - 30 * DAY) {
      throw new UsageError(
        "--since reaches back more than 30 days: resends reach back 30 days at most. Give e.g. --since 24h.",
      );
    }
    const client = await platformClient(flags, ctx);
    const api = await import("../../platform/mod.ts");
    const out = ctx.out;
    const ids: string[] = [];
    const byStatus: Record<string, number> = {};
    for await (
      const n of api.listNotifications(client, webhookId, {
        startTime: since,
        sortBy: "createdAt",
        order: "ASC",
        pageSize: 100,
      }, (page) => void out.progress(`listing: ${ids.length + page.data.length} notifications`))
    ) {
      ids.push(n.id);
      byStatus[n.status] = (byStatus[n.status] ?? 0) + 1;
    }
    await out.clearProgress();
    const statuses = Object.fromEntries(
      NOTIFICATION_STATUSES.filter((s) => byStatus[s]).map((s) => [s, byStatus[s]]),
    );
    const sinceIso = new Date(since).toISOString();
    const breakdown = Object.entries(statuses).map(([s, c]) => `${c} ${s}`).join(", ") || "none";
    if (flags.dryRun) {
      if (out.format === "table") {
        await out.write(
          `would resend ${ids.length} notification${
            ids.length === 1 ? "" : "s"
          } created since ${sinceIso} (${breakdown})\n`,
        );
      } else await out.object({ dryRun: true, count: ids.length, since: sinceIso, statuses });
      return 0;
    }
    const runKey = flags.idempotencyKey ?? defaultRunKey(webhookId, since);
    await out.log(
      `resending ${ids.length} notification(s) created since ${sinceIso} (${breakdown}); run key ${runKey}`,
    );
    const release = ctx.takeSignals?.(["SIGINT", "SIGTERM"]) ?? (() => {});
    let stopped: string | undefined;
    void whenStopped(ctx.signal).then((why) => stopped = why);
    let next = 0;
    let resent = 0;
    let replayed = 0;
    const refused: string[] = [];
    let fatal: unknown;
    const worker = async () => {
      while (next < ids.length && stopped === undefined && fatal === undefined) {
        const id = ids[next++];
        try {
          const r = await api.resendNotification(
            client,
            webhookId,
            id,
            await resendKey(runKey, webhookId, id),
          );
          if (r.headers.get("idempotent-replayed") === "true") replayed++;
          else resent++;
        } catch (e) {
          if (e instanceof api.PlatformApiError && e.status >= 400 && e.status < 500) {
            refused.push(`${id}: ${e.message}`);
          } else fatal ??= e;
        }
        const done = resent + replayed + refused.length;
        await out.progress(`resent ${done} of ${ids.length}`);
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(flags.concurrency, ids.length) }, worker));
    } finally {
      release();
      await out.clearProgress();
    }
    const done = resent + replayed + refused.length;
    const summary = {
      total: ids.length,
      resent,
      alreadyResent: replayed,
      refused: refused.length,
      since: sinceIso,
      statuses,
      runKey,
    };
    if (given.has("format") && out.format !== "table") await out.object(summary);
    await out.log(
      `resent ${resent} of ${ids.length} notification(s)` +
        (replayed ? `; ${replayed} already resent by an earlier run with this run key` : "") +
        (refused.length ? `; ${refused.length} refused (first: ${refused[0]})` : ""),
    );
    if (fatal !== undefined || stopped !== undefined) {
      const how = `run again with --idempotencyKey '${runKey}' --since ${sinceIso} ` +
        "to go on without resending twice";
      if (fatal !== undefined) {
        await out.log(`stopped after ${done} of ${ids.length}: ${how}`);
        throw fatal;
      }
      throw new CliError(`Interrupted (${stopped}) after ${done} of ${ids.length}: ${how}.`);
    }
    if (refused.length) {
      throw new CliError(
        `${refused.length} of ${ids.length} resend(s) were refused by the platform (first: ${
          refused[0]
        }).`,
      );
    }
    return 0;
  },
});
