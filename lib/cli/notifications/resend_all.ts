/**
 * `service notifications resend-all --webhookId W [--since 24h] [--status S]...
 * [--event E]... [--resourceId R] [--wait] [--dryRun] [--idempotencyKey K]`:
 * the platform console's "Resend notifications" (seed 4.5): every
 * notification of the endpoint created since the given time (default the
 * last 24 hours), whatever its status (COMPLETED, FAILED, IN_PROGRESS,
 * ON_HOLD), or only those the filters name.
 *
 * One platform call does it: resend by query (`POST …/notifications/
 * resend_by_query` with `statuses`, `startTime`, `endTime`, `events`,
 * `resourceId`), which answers a job; `--wait` follows the job to its end
 * with progress on standard error, and gives up (exit 7) on a job that makes
 * no progress for `--waitTimeout` (default 10 minutes). The platform takes a window of at most 24
 * hours that starts within the last 72; for a longer or older `--since`, or
 * a platform that does not serve the call (404/405), the command lists the
 * window and resends one by one (`resend_one_by_one.ts`). `--dryRun` lists
 * and counts, resending nothing.
 *
 * @module
 */

import { leaf, platformApi } from "../command.ts";
import { CliError, ExitCode, UsageError } from "../errors.ts";
import { webhookVerbFlags } from "../webhooks/common.ts";
import { NOTIFICATION_STATUSES } from "../../core/mod.ts";
import { MAX_RESENDS_PER_RUN, resendOneByOne, tooMany } from "./resend_one_by_one.ts";
import { followResendJob, waitTimeoutFlag } from "./follow_job.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

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
    event: {
      type: "string",
      multiple: true,
      placeholder: "TYPE",
      description: "Only this event type.",
    },
    resourceId: { type: "string", placeholder: "ID", description: "Only this resource." },
    wait: {
      type: "boolean",
      description: "Follow the platform's job to its end, with progress on standard error.",
    },
    pollingInterval: {
      type: "duration",
      default: 1000,
      min: 100,
      max: 600_000,
      description: "With --wait: longest time between job polls.",
    },
    ...waitTimeoutFlag,
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
      description: "One by one: resends in flight at once.",
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
    const sinceIso = new Date(since).toISOString();
    const statuses = flags.status.length ? flags.status : [...NOTIFICATION_STATUSES];
    const filters = {
      statuses,
      events: flags.event.length ? flags.event : undefined,
      resourceId: flags.resourceId,
    };
    const bulk = now - since <= DAY && !flags.dryRun;
    if (bulk) {
      try {
        return await resendByQuery();
      } catch (e) {
        // a platform without the bulk call: the one-by-one path below
        if (!(e instanceof api.PlatformApiError && (e.status === 404 || e.status === 405))) {
          throw e;
        }
        await out.log(
          `the platform does not serve resend by query (${e.status}): resending one by one`,
        );
      }
    }
    // list the window, one page at a time: counted for --dryRun, resent as listed otherwise
    let listedCount = 0;
    const listed = async function* () {
      for await (
        const n of api.listNotifications(client, webhookId, {
          startTime: since,
          sortBy: "createdAt",
          order: "ASC",
          pageSize: 100,
          ...filters,
        }, (page) => {
          listedCount += page.data.length;
          if (flags.dryRun) void out.progress(`listing: ${listedCount} notifications`);
        })
      ) {
        yield { id: n.id, status: n.status };
      }
    };
    if (flags.dryRun) {
      const tally = new api.StatusTally();
      let count = 0;
      for await (const n of listed()) {
        if (++count > flags.maxNotifications) throw tooMany(sinceIso, flags.maxNotifications);
        tally.add(n.status);
      }
      await out.clearProgress();
      const counted = tally.counts();
      if (out.format === "table") {
        const breakdown = Object.entries(counted).map(([s, c]) => `${c} ${s}`).join(", ") ||
          "none";
        await out.text(
          `would resend ${count} notification${
            count === 1 ? "" : "s"
          } created since ${sinceIso} (${breakdown})`,
        );
      } else {
        await out.object({ dryRun: true, count, since: sinceIso, statuses: counted });
      }
      return 0;
    }
    return await resendOneByOne(ctx, client, {
      webhookId,
      listed: listed(),
      listedSoFar: () => listedCount,
      idempotencyKey: flags.idempotencyKey,
      since,
      concurrency: flags.concurrency,
      max: flags.maxNotifications,
      printSummary: given.has("format") && out.format !== "table",
    });

    async function resendByQuery(): Promise<number> {
      const r = await api.resendByQuery(client, webhookId, {
        ...filters,
        startTime: since,
        endTime: now,
      }, flags.idempotencyKey);
      const json = given.has("format") && out.format !== "table";
      const total = r.data.total ?? 0;
      if (!r.jobId) {
        if (json) await out.object({ accepted: true, total, idempotencyKey: r.idempotencyKey });
        await out.log(`nothing to resend since ${sinceIso}`);
        return 0;
      }
      await out.log(`resending ${total} notification(s) created since ${sinceIso}: job ${r.jobId}`);
      if (!flags.wait) {
        if (json) {
          await out.object({
            accepted: true,
            total,
            jobId: r.jobId,
            idempotencyKey: r.idempotencyKey,
          });
        }
        await out.log("add --wait to follow the job to its end");
        return 0;
      }
      const job = await followResendJob(
        ctx,
        client,
        { webhookId, jobId: r.jobId, kind: "query" },
        flags.pollingInterval,
        flags.waitTimeout,
      );
      if (json) await out.object({ accepted: true, ...job, idempotencyKey: r.idempotencyKey });
      if (job.status === "FAILED") {
        throw new CliError(
          `The resend job ${job.jobId} FAILED after ${job.processed} of ${job.total}. Run resend-all again.`,
          ExitCode.failed,
        );
      }
      return 0;
    }
  },
});
