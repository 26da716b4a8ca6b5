/**
 * `service notifications list|get|attempts|resend|resend-by-resource|resend-failed|tail`:
 * a webhook's notifications from a terminal or a CI pipeline (cli.md);
 * `resend-all` lives in `notifications/`.
 *
 * Choices where the spec is silent:
 * - Resends print nothing on standard output unless `--format json|ndjson` is
 *   given explicitly; a confirmation line goes to standard error.
 * - `resend-by-resource --dryRun` counts with the list endpoint: the resource's
 *   notifications of the last 30 days whose status is not excluded.
 * - `attempts` adds `webhookId` and `notificationId` to each record, so its
 *   ndjson output is `breaker simulate` input as it is.
 *
 * @module
 */

import type { Column } from "./output.ts";
import { type Command, group, leaf, platformApi } from "./command.ts";
import { UsageError } from "./errors.ts";
import { whenStopped } from "./stop_signals.ts";
import { cells } from "./table.ts";
import { NOTIFICATION_SORT_FIELDS, NOTIFICATION_STATUSES } from "../core/mod.ts";
import { eventFlag, idempotencyFlag, webhookVerbFlags } from "./webhooks/common.ts";
import { waitFlags } from "./notifications/follow_job.ts";

const notificationFlag = {
  notificationId: {
    type: "string",
    placeholder: "ID",
    required: true,
    description: "The notification's id.",
  },
} as const;

const NOTIFICATION_COLUMNS: Column[] = [
  { header: "id", value: "id", width: 36 },
  { header: "status", value: "status", width: 11 },
  { header: "eventType", value: "eventType", width: 26 },
  { header: "resourceId", value: "resourceId", width: 36 },
  { header: "createdAt", value: "createdAt", width: 24 },
  { header: "updatedAt", value: "updatedAt" },
];

const list = leaf({
  summary: "List a webhook's notifications (one page, or --all to the end).",
  usage: "--webhookId W [--order ASC|DESC] [--sortBy F] [--pageSize N] [--pageCursor C] [--all] " +
    "[--status S]... [--event E]... [--resourceId R] [--startTime T] [--endTime T]",
  description: "Times take epoch ms, ISO 8601, or a duration back from now (24h, 30d).\n" +
    "--format ndjson prints one notification a line; json prints the page {data, next, total} " +
    "(with --all: {data} with every item).",
  flags: {
    ...webhookVerbFlags,
    order: {
      type: "string",
      choices: ["ASC", "DESC"],
      upper: true,
      description: "Sort order (platform default DESC).",
    },
    sortBy: {
      type: "string",
      choices: NOTIFICATION_SORT_FIELDS,
      description: "Sort field (platform default updatedAt).",
    },
    pageSize: {
      type: "integer",
      min: 1,
      max: 100,
      description: "Items per page, 1-100 (platform default 100).",
    },
    pageCursor: { type: "string", placeholder: "CURSOR", description: "Start at this page." },
    all: { type: "boolean", description: "Follow next to the end, streaming rows as they arrive." },
    status: {
      type: "string",
      multiple: true,
      choices: NOTIFICATION_STATUSES,
      upper: true,
      description: "Only this status.",
    },
    ...eventFlag,
    resourceId: { type: "string", placeholder: "ID", description: "Only this resource." },
    startTime: {
      type: "time",
      description: "Created at or after (platform default: 31 days ago).",
    },
    endTime: { type: "time", description: "Created at or before." },
  },
  examples: [
    "service notifications list --webhookId $W --status FAILED --startTime 24h",
    "service notifications list --webhookId $W --all --format ndjson > notifications.ndjson",
  ],
  async run({ flags }, ctx) {
    if ((flags.startTime ?? -Infinity) > (flags.endTime ?? Infinity)) {
      throw new UsageError("--startTime is after --endTime: give a start before the end.");
    }
    const { client, api } = await platformApi(flags, ctx);
    const query = {
      order: flags.order,
      sortBy: flags.sortBy,
      pageSize: flags.pageSize,
      pageCursor: flags.pageCursor,
      startTime: flags.startTime,
      endTime: flags.endTime,
      statuses: flags.status,
      events: flags.event,
      resourceId: flags.resourceId,
    };
    const out = ctx.out;
    if (!flags.all) {
      const page = await api.listNotificationsPage(client, flags.webhookId, query);
      if (out.format === "json") {
        await out.object({ data: page.data, next: page.next ?? null, total: page.total });
      } else {
        await out.records(page.data, NOTIFICATION_COLUMNS, { empty: "no notifications" });
        if (page.next && out.format === "table") {
          await out.log(`more: --pageCursor ${page.next}  (or --all)`);
        }
      }
      return 0;
    }
    let fetched = 0;
    let total: number | undefined;
    const rows = api.listNotifications(client, flags.webhookId, query, (page) => {
      if (page.total !== undefined) total = page.total;
      fetched += page.data.length;
      void out.progress(
        `fetched ${fetched}${total !== undefined ? ` of ${total}` : ""} notifications`,
      );
    });
    await out.records(rows, NOTIFICATION_COLUMNS, { empty: "no notifications" });
    return 0;
  },
});

const get = leaf({
  summary: "Show one notification.",
  usage: "--webhookId W --notificationId N [--includeData]",
  flags: {
    ...webhookVerbFlags,
    ...notificationFlag,
    includeData: { type: "boolean", description: "Include the payload." },
  },
  examples: [
    "service notifications get --webhookId $W --notificationId $N --includeData --format json",
  ],
  async run({ flags }, ctx) {
    const { client, api } = await platformApi(flags, ctx);
    const { webhookId, notificationId, includeData } = flags;
    await ctx.out.object(
      await api.getNotification(client, webhookId, notificationId, includeData === true),
    );
    return 0;
  },
});

const attempts = leaf({
  summary: "A notification's delivery attempts, in the input format of `breaker simulate`.",
  usage: "--webhookId W --notificationId N [--all]",
  description:
    "Each record: sentTime, duration, responseCode or failureReason, plus webhookId and notificationId.",
  flags: {
    ...webhookVerbFlags,
    ...notificationFlag,
    all: { type: "boolean", description: "Every attempt (follow next), not only the first page." },
    pageSize: {
      type: "integer",
      min: 1,
      max: 100,
      description: "Attempts per page (platform default 10).",
    },
  },
  examples: [
    "service notifications attempts --webhookId $W --notificationId $N --all | service breaker simulate",
  ],
  async run({ flags }, ctx) {
    const webhookId = flags.webhookId;
    const id = flags.notificationId;
    const { client, api } = await platformApi(flags, ctx);
    async function* rows() {
      let n = 0;
      for await (const a of api.listAttempts(client, webhookId, id, flags.pageSize)) {
        yield { ...a, webhookId, notificationId: id };
        n++;
        if (!flags.all && n >= (flags.pageSize ?? 10)) return;
      }
    }
    await ctx.out.records(rows(), [
      { header: "sentTime", value: "sentTime", width: 24 },
      { header: "duration", value: "duration", width: 8 },
      { header: "responseCode", value: "responseCode", width: 12 },
      { header: "failureReason", value: "failureReason" },
    ]);
    return 0;
  },
});

async function accepted(
  ctx: Parameters<Parameters<typeof leaf>[0]["run"]>[1],
  given: Set<string>,
  record: Record<string, unknown>,
  human: string,
): Promise<void> {
  if (given.has("format") && ctx.out.format !== "table") {
    await ctx.out.object({ accepted: true, ...record });
  } else await ctx.out.log(human);
}

const resend = leaf({
  summary: "Resend one notification.",
  usage: "--webhookId W --notificationId N [--idempotencyKey K]",
  flags: {
    ...webhookVerbFlags,
    ...notificationFlag,
    ...idempotencyFlag,
  },
  examples: ["service notifications resend --webhookId $W --notificationId $N"],
  async run({ flags, given }, ctx) {
    const id = flags.notificationId;
    const { client, api } = await platformApi(flags, ctx);
    const r = await api.resendNotification(client, flags.webhookId, id, flags.idempotencyKey);
    await ctx.out.debug(`request id ${r.requestId ?? "-"}, status ${r.status}`);
    await accepted(
      ctx,
      given,
      { notificationId: id, idempotencyKey: r.idempotencyKey },
      `resend of ${id} accepted`,
    );
    return 0;
  },
});

const resendByResource = leaf({
  summary:
    "Resend every notification of a resource from the last 30 days (except excluded statuses).",
  usage: "--webhookId W --resourceId R [--excludeStatuses S,...] [--idempotencyKey K] [--dryRun]",
  description:
    "Statuses resent: FAILED, IN_PROGRESS and ON_HOLD by default. The seed describes the\n" +
    "operation as resending every notification of the resource from the last 30 days; the\n" +
    "platform documents that without excludeStatuses it skips COMPLETED, and this command keeps\n" +
    "the platform's default. --excludeStatuses= (empty) resends every status, COMPLETED too.\n" +
    "The run reports how many notifications it resent (counted with the list API just before;\n" +
    "the platform's answer carries no count). --dryRun counts and resends nothing.",
  flags: {
    ...webhookVerbFlags,
    ...idempotencyFlag,
    resourceId: {
      type: "string",
      placeholder: "ID",
      required: true,
      description: "The resource (e.g. a transaction or vault account id).",
    },
    excludeStatuses: {
      type: "list",
      choices: NOTIFICATION_STATUSES,
      upper: true,
      placeholder: "S,...",
      description: "Statuses not to resend (default COMPLETED).",
    },
    dryRun: { type: "boolean", description: "Count what would be resent; resend nothing." },
  },
  examples: [
    "service notifications resend-by-resource --webhookId $W --resourceId $TX --dryRun --format json",
    "service notifications resend-by-resource --webhookId $W --resourceId $TX --excludeStatuses=",
  ],
  async run({ flags, given }, ctx) {
    const { webhookId, resourceId } = flags;
    const { client, api } = await platformApi(flags, ctx);
    const excluded = given.has("excludeStatuses") ? flags.excludeStatuses ?? [] : ["COMPLETED"];
    const statuses = NOTIFICATION_STATUSES.filter((s) => !excluded.includes(s));
    const now = ctx.now?.() ?? Date.now();
    const count = await api.countResendByResource(client, webhookId, resourceId, excluded, now);
    const plural = count === 1 ? "" : "s";
    if (flags.dryRun) {
      const line = `would resend ${count} notification${plural} of resource ${resourceId}`;
      await ctx.out.outcome(line, { dryRun: true, count });
      return 0;
    }
    const body: { resourceId: string; excludeStatuses?: string[] } = { resourceId };
    if (given.has("excludeStatuses")) body.excludeStatuses = excluded;
    const r = await api.resendByResource(client, webhookId, body, flags.idempotencyKey);
    await accepted(
      ctx,
      given,
      { resourceId, count, idempotencyKey: r.idempotencyKey },
      `resend of ${count} notification${plural} of ${resourceId} accepted (${
        statuses.join(", ") || "no status"
      })`,
    );
    return 0;
  },
});

const resendFailed = leaf({
  summary: "Resend the failed notifications of the last 24 hours (a platform job).",
  usage: "--webhookId W [--startTime T] [--event E]... [--wait] [--idempotencyKey K]",
  flags: {
    ...webhookVerbFlags,
    ...idempotencyFlag,
    startTime: {
      type: "time",
      description: "Only failures since this time (within the last 24 hours).",
    },
    ...eventFlag,
    wait: {
      type: "boolean",
      description: "Follow the job to its end, with progress on standard error.",
    },
    ...waitFlags,
    pollInterval: {
      type: "duration",
      min: 100,
      max: 600_000,
      hidden: true,
      description: "The old name of --pollingInterval (as `service rpc` spells it).",
    },
  },
  examples: ["service notifications resend-failed --webhookId $W --wait"],
  async run({ flags, given }, ctx) {
    const webhookId = flags.webhookId;
    const { client, api } = await platformApi(flags, ctx);
    const body: { startTime?: number; events?: string[] } = {};
    if (flags.startTime !== undefined) body.startTime = flags.startTime;
    if (flags.event.length) body.events = flags.event;
    const r = await api.resendFailed(client, webhookId, body, flags.idempotencyKey);
    const total = r.data.total;
    const jobId = total === 0 ? undefined : r.jobId;
    if (!jobId || !flags.wait) {
      await accepted(
        ctx,
        given,
        { total, jobId, idempotencyKey: r.idempotencyKey }, // no job: no jobId in the JSON
        jobId
          ? `resending ${total} failed notifications: job ${jobId} (follow with --wait)`
          : "no failed notifications to resend",
      );
      return 0;
    }
    const { followResendJob } = await import("./notifications/follow_job.ts");
    return await followResendJob(ctx, client, { webhookId, jobId, kind: "failed" }, {
      maxDelayMs: flags.pollInterval ?? flags.pollingInterval,
      waitTimeoutMs: flags.waitTimeout,
      json: given.has("format") && ctx.out.format !== "table",
      idempotencyKey: r.idempotencyKey,
      again: "Run resend-failed again, or resend one by one.",
    });
  },
});

const TAIL_COLUMNS: Column[] = [
  { header: "time", value: "time", width: 24 },
  { header: "change", value: "change", width: 7 },
  {
    header: "status",
    value: (r) => r.previousStatus ? `${r.previousStatus} -> ${r.status}` : String(r.status),
    width: 26,
  },
  { header: "eventType", value: "eventType", width: 26 },
  { header: "resourceId", value: "resourceId", width: 20 }, // none: "-", as every empty cell
  { header: "id", value: "id" },
];

/**
 * `tail`, in the spirit of `stripe logs tail`: the platform's `NotificationTail` finds the
 * changes, this verb polls it and prints. A poll that fails in a way worth a retry (the
 * client's `isRetryable`) after the client's retries is reported and the next poll goes on;
 * any other error ends the command.
 */
const tail = leaf({
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
      await out.records(await tail.poll() as unknown as Record<string, unknown>[], TAIL_COLUMNS);
      return 0;
    }
    if (out.format === "json") {
      throw new UsageError(
        "--follow prints a line per change: use --format ndjson (or table), not json.",
      );
    }
    const release = ctx.takeSignals?.(["SIGINT", "SIGTERM"]) ?? (() => {});
    await out.log(
      `following notifications of ${webhookId} since ${
        new Date(since).toISOString()
      } (every ${flags.interval} ms); Ctrl-C to stop`,
    );
    // The header now; rows as they come, at the widths it was given.
    const rows = out.format === "table" ? await out.table(TAIL_COLUMNS) : undefined;
    try {
      while (!ctx.signal?.aborted) {
        try {
          const lines = await tail.poll() as unknown as Record<string, unknown>[];
          if (rows) await rows(lines.map((l) => cells(TAIL_COLUMNS, l)));
          else await out.records(lines, TAIL_COLUMNS); // ndjson: nothing for no change
        } catch (e) {
          if (!api.isRetryable(e)) throw e;
          await out.warn(`poll failed, trying again: ${(e as Error).message}`);
        }
        await api.abortableSleep(flags.interval, ctx.signal).catch(() => {}); // aborted: stopping
      }
      await out.log(`stopped (${await whenStopped(ctx.signal)})`); // aborted: at once
    } finally {
      release();
    }
    return 0;
  },
});

/** `service notifications`. */
export const notificationsCommand: Command = group(
  "A webhook's notifications: list, follow, inspect attempts, resend one, by resource, " +
    "all failed or all of the last 24 hours.",
  {
    list,
    get,
    attempts,
    resend,
    "resend-by-resource": resendByResource,
    "resend-failed": resendFailed,
    "resend-all": [
      "Resend every notification (any status) of the last 24 hours.",
      async () => (await import("./notifications/resend_all.ts")).resendAllCommand,
    ],
    tail: { ...tail, summary: "New notifications and status changes as they happen (--follow)." },
  },
);
