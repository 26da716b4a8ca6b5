/**
 * `service webhooks`: webhook endpoints. `list|get|enable|disable|metrics`
 * live here; `create|update|delete` (the endpoint's life), `verify` (a
 * delivery's signature) and `listen` (a local receiver) in `webhooks/`.
 * `enable` is Update Webhook with `enabled: true`, which reactivates a
 * suspended endpoint at once (there is no cooldown).
 *
 * @module
 */

import {
  type Command,
  connectionFlags,
  formatFlag,
  group,
  leaf,
  platformClient,
} from "./command.ts";
import { WEBHOOK_COLUMNS as COLUMNS, webhookVerbFlags } from "./webhooks/common.ts";

const list = leaf({
  summary: "List the webhook endpoints.",
  usage: "[--order ASC|DESC] [--pageSize N]",
  flags: {
    ...connectionFlags,
    ...formatFlag,
    order: { type: "string", choices: ["ASC", "DESC"], upper: true, description: "Sort order." },
    pageSize: {
      type: "integer",
      min: 1,
      max: 100,
      description: "Items per request (the platform's default is 10).",
    },
  },
  examples: ["service webhooks list --format json"],
  async run({ flags }, ctx) {
    const client = await platformClient(flags, ctx);
    const { listWebhooks } = await import(
      "../platform/mod.ts"
    );
    await ctx.out.records(
      listWebhooks(client, { order: flags.order, pageSize: flags.pageSize }),
      COLUMNS,
      { empty: "no webhooks (service webhooks create --url URL --events E creates one)" },
    );
    return 0;
  },
});

const get = leaf({
  summary: "Show one webhook endpoint.",
  usage: "--webhookId ID",
  flags: webhookVerbFlags,
  examples: ["service webhooks get --webhookId 3fa85f64-5717-4562-b3fc-2c963f66afa6"],
  async run({ flags }, ctx) {
    const id = flags.webhookId;
    const client = await platformClient(flags, ctx);
    const { getWebhook } = await import(
      "../platform/mod.ts"
    );
    await ctx.out.object(await getWebhook(client, id));
    return 0;
  },
});

/** `enable`/`disable`: `summary` for the group's list; the help's first line says more. */
function setEnabled(enabled: boolean, summary: string): Command {
  const command = leaf({
    summary: enabled
      ? "Reactivate a suspended (or disabled) endpoint: Update Webhook with enabled=true. No cooldown."
      : "Disable an endpoint: Update Webhook with enabled=false.",
    usage: "--webhookId ID",
    flags: webhookVerbFlags,
    examples: [`service webhooks ${enabled ? "enable" : "disable"} --webhookId $WEBHOOK`],
    async run({ flags }, ctx) {
      const id = flags.webhookId;
      const client = await platformClient(flags, ctx);
      const { getWebhook, updateWebhook } = await import(
        "../platform/mod.ts"
      );
      const before = enabled ? await getWebhook(client, id).catch(() => undefined) : undefined;
      const after = await updateWebhook(client, id, { enabled });
      if (ctx.out.format === "table") {
        await ctx.out.text(
          `${id}: ${
            before && before.status !== after.status ? `${before.status} -> ` : ""
          }${after.status}`,
        );
      } else {
        await ctx.out.object(after);
      }
      return 0;
    },
  });
  return { ...command, summary };
}

const metrics = leaf({
  summary: "Show the last active hour's error rate of an endpoint (percent).",
  usage: "--webhookId ID",
  flags: webhookVerbFlags,
  examples: ["service webhooks metrics --webhookId $WEBHOOK --format json"],
  async run({ flags }, ctx) {
    const id = flags.webhookId;
    const client = await platformClient(flags, ctx);
    const { getErrorRate } = await import(
      "../platform/mod.ts"
    );
    const value = await getErrorRate(client, id);
    const obj = { webhookId: id, metric: "LAST_ACTIVE_HOUR_ERROR_RATE", value: Number(value) };
    if (ctx.out.format === "table") {
      await ctx.out.text(`${id}: last active hour error rate ${value}%`);
    } else await ctx.out.object(obj);
    return 0;
  },
});

/** `service webhooks`. */
export const webhooksCommand: Command = group(
  "Webhook endpoints (Webhooks V2): create, list, change, delete, reactivate, error rate; " +
    "verify a delivery; a local receiver.",
  {
    list,
    get,
    enable: setEnabled(true, "Reactivate a suspended endpoint (enabled=true)."),
    disable: setEnabled(false, "Disable an endpoint (enabled=false)."),
    metrics,
    create: [
      "Create an endpoint (--url, --events).",
      async () => (await import("./webhooks/create.ts")).createCommand,
    ],
    update: [
      "Change an endpoint's url, events, description or enabled.",
      async () => (await import("./webhooks/update.ts")).updateCommand,
    ],
    delete: [
      "Delete an endpoint (asks on a terminal; --yes in scripts).",
      async () => (await import("./webhooks/delete.ts")).deleteCommand,
    ],
    verify: [
      "Check a delivery's signature against its raw body (exit 0 valid, 1 invalid).",
      async () => (await import("./webhooks/verify.ts")).verifyCommand,
    ],
    listen: [
      "A local receiver: prints deliveries, forwards them to your app, records attempts.",
      async () => (await import("./webhooks/listen.ts")).listenCommand,
    ],
  },
);
