/**
 * `service notifications resend-all`: the platform console's "Resend notifications" (seed 4.5),
 * as the help describes it. `resendAll` of lib/platform does it (the bulk call or one by one,
 * the run key); this verb prints its progress and result, and how an interrupted run goes on.
 *
 * @module
 */

import { leaf, platformApi } from "../command.ts";
import { CliError, UsageError } from "../errors.ts";
import { eventFlag, webhookVerbFlags } from "../webhooks/common.ts";
import { NOTIFICATION_STATUSES } from "../../core/mod.ts";
import { followResendJob, waitFlags } from "./follow_job.ts";
import { whenStopped } from "../stop_signals.ts";

const DAY = 24 * 3_600_000;

/** The most notifications one run lists and resends one by one by default (`--maxNotifications`): 100,000. */
const MAX_RESENDS_PER_RUN = 100_000;

/** The error for a listing longer than `max` (`--maxNotifications`). */
function tooMany(sinceIso: string, max: number): CliError {
  return new CliError(
    `More than ${max} notifications listed since ${sinceIso}: one run takes at most ${max} ` +
      `(--maxNotifications). Narrow the window (--since, --status, --event, --resourceId).`,
  );
}

/** The `resend-all` verb. */
export const resendAllCommand = leaf({
  summary: "Resend every notification (any status) of the last 24 hours, or since --since.",
  usage:
    "--webhookId W [--since 24h] [--status S]... [--event E]... [--resourceId R] [--wait] [--dryRun] [--idempotencyKey K]",
  description:
    "Every status is included unless --status names some: COMPLETED, FAILED, IN_PROGRESS and\n" +
    'ON_HOLD (the console\'s "Resend notifications"). One platform call (resend by query) starts a\n' +
    "job; --wait follows it with progress. The platform takes at most 24 hours within the last 72:\n" +
    "for a longer or older --since the window is listed and resent one by one (--concurrency at a\n" +
    "time, each Idempotency-Key from the run key, so an interrupted run started again does not\n" +
    "resend twice). --dryRun counts what would be resent and resends nothing.",
  flags: {
    ...webhookVerbFlags,
    since: {
      type: "time",
      placeholder: "TIME",
      description: "Created at or after (default 24h: the last 24 hours; at most 30d).",
    },
    status: {
      type: "string",
      multiple: true,
      choices: NOTIFICATION_STATUSES,
      upper: true,
      description: "Only this status (default: every status).",
    },
    ...eventFlag,
    resourceId: { type: "string", placeholder: "ID", description: "Only this resource." },
    wait: {
      type: "boolean",
      description: "Follow the platform's job to its end, with progress on standard error.",
    },
    ...waitFlags,
    dryRun: { type: "boolean", description: "Count what would be resent; resend nothing." },
    idempotencyKey: {
      type: "string",
      placeholder: "KEY",
      description:
        "Idempotency-Key of the bulk call; one by one, the run key the per-notification keys come from.",
    },
    maxNotifications: {
      type: "integer",
      default: MAX_RESENDS_PER_RUN,
      min: 1,
      max: 10_000_000,
      description: "Listed one by one or by --dryRun: at most this many (more: exit 1).",
    },
    concurrency: {
      type: "integer",
      default: 4,
      min: 1,
      max: 32,
      description:
        "One by one: resends in flight at once (--dryRun resends nothing and ignores it).",
    },
  },
  examples: [
    "service notifications resend-all --webhookId $W --dryRun --format json",
    "service notifications resend-all --webhookId $W --wait",
    "service notifications resend-all --webhookId $W --status FAILED --event transaction.created --wait",
    "service notifications resend-all --webhookId $W --since 3d   # listed, resent one by one",
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
    const { client, api } = await platformApi(flags, ctx);
    const out = ctx.out;
    const json = given.has("format") && out.format !== "table";
    const sinceIso = new Date(since).toISOString();
    let release = () => {};
    const r = await api.resendAll(client, {
      webhookId,
      since,
      now,
      filters: { statuses: flags.status, events: flags.event, resourceId: flags.resourceId },
      dryRun: flags.dryRun,
      idempotencyKey: flags.idempotencyKey,
      max: flags.maxNotifications,
      concurrency: flags.concurrency,
      stopped: whenStopped(ctx.signal),
      onFallback: (status) =>
        out.log(`the platform does not serve resend by query (${status}): resending one by one`),
      onOneByOne: async (runKey) => {
        await out.log(
          `resending the notifications created since ${sinceIso} one by one, as they are listed; run key ${runKey}`,
        );
        release = ctx.takeSignals?.(["SIGINT", "SIGTERM"]) ?? release;
      },
      onProgress: (done, total) =>
        out.progress(
          flags.dryRun ? `listing: ${total} notifications` : `resent ${done} of ${total}`,
        ),
    }).finally(() => {
      release();
      return out.clearProgress();
    });
    if (r.path === "query") {
      const { total, jobId, idempotencyKey } = r;
      if (jobId) {
        await out.log(`resending ${total} notification(s) created since ${sinceIso}: job ${jobId}`);
      }
      if (!jobId || !flags.wait) {
        if (json) await out.object({ accepted: true, total, jobId, idempotencyKey }); // no job: no jobId
        await out.log(
          jobId ? "add --wait to follow the job to its end" : `nothing to resend since ${sinceIso}`,
        );
        return 0;
      }
      return await followResendJob(ctx, client, { webhookId, jobId, kind: "query" }, {
        maxDelayMs: flags.pollingInterval,
        waitTimeoutMs: flags.waitTimeout,
        json,
        idempotencyKey,
        again: "Run resend-all again.",
      });
    }
    const fatal = r.overMax ? tooMany(sinceIso, flags.maxNotifications) : r.fatal;
    if (r.path === "dryRun") {
      if (fatal !== undefined) throw fatal;
      const { total: count, statuses: counted } = r;
      const breakdown = Object.entries(counted).map(([s, c]) => `${c} ${s}`).join(", ") || "none";
      await out.outcome(
        `would resend ${count} notification${
          count === 1 ? "" : "s"
        } created since ${sinceIso} (${breakdown})`,
        { dryRun: true, count, since: sinceIso, statuses: counted },
      );
      return 0;
    }
    const { total, resent, replayed, refused, firstRefused, stopped, runKey } = r;
    const done = resent + replayed + refused;
    if (json) {
      await out.object({
        total,
        resent,
        alreadyResent: replayed,
        refused,
        since: sinceIso,
        statuses: r.statuses,
        runKey,
      });
    }
    await out.log(
      `resent ${resent} of ${total} notification(s)` +
        (replayed ? `; ${replayed} already resent by an earlier run with this run key` : "") +
        (refused ? `; ${refused} refused (first: ${firstRefused})` : ""),
    );
    if (fatal !== undefined || stopped !== undefined) {
      const how = `run again with --idempotencyKey '${runKey}' --since ${sinceIso} ` +
        "to go on without resending twice";
      if (fatal !== undefined) {
        if (!(fatal instanceof CliError)) {
          await out.log(`stopped after ${done} of ${total}: ${how}`);
        }
        throw fatal;
      }
      throw new CliError(`Interrupted (${stopped}) after ${done} of ${total}: ${how}.`);
    }
    if (refused) {
      throw new CliError(
        `${refused} of ${total} resend(s) were refused by the platform (first: ${firstRefused}).`,
      );
    }
    if (replayed > 0 && resent === 0) {
      await out.log(
        `nothing new was resent: ${
          flags.idempotencyKey === undefined
            ? "a run in the same hour with the same --since already resent these (the run key is the webhook and the hour of --since)"
            : "an earlier run with this --idempotencyKey already resent these"
        }; to resend them again, give a new key: --idempotencyKey <new-key>`,
      );
    }
    return 0;
  },
});
