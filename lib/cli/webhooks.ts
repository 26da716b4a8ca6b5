/**
 * `service webhooks`: webhook endpoints, from `list` to `delete`; `verify` (a
 * delivery's signature) and `listen` (a local receiver) live in `webhooks/`.
 * `enable` is Update Webhook with `enabled: true`, which reactivates a
 * suspended endpoint at once (there is no cooldown).
 *
 * @module
 */

import { type Command, connectionFlags, formatFlag, group, leaf, platformApi } from "./command.ts";
import { CliError, ExitCode, UsageError } from "./errors.ts";
import { type Column, type Io, writeAll } from "./output.ts";
import {
  checkEndpointUrl,
  checkEvents,
  idempotencyFlag,
  webhookVerbFlags,
} from "./webhooks/common.ts";

/** The table columns of a webhook. */
const COLUMNS: Column[] = [
  { header: "id", value: "id", width: 36 },
  { header: "status", value: "status", width: 9 },
  {
    header: "events",
    value: (r) => (r.events as string[] | undefined)?.join(",") ?? "",
    width: 30,
  },
  { header: "url", value: "url" },
];

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
    const { client, api } = await platformApi(flags, ctx);
    await ctx.out.records(
      api.listWebhooks(client, { order: flags.order, pageSize: flags.pageSize }),
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
    const { client, api } = await platformApi(flags, ctx);
    await ctx.out.object(await api.getWebhook(client, flags.webhookId));
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
      const { client, api } = await platformApi(flags, ctx);
      const before = enabled ? await api.getWebhook(client, id).catch(() => undefined) : undefined;
      const after = await api.updateWebhook(client, id, { enabled });
      const change = before && before.status !== after.status ? `${before.status} -> ` : "";
      await ctx.out.outcome(`${id}: ${change}${after.status}`, after);
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
    const { client, api } = await platformApi(flags, ctx);
    const value = await api.getErrorRate(client, id);
    const obj = { webhookId: id, metric: "LAST_ACTIVE_HOUR_ERROR_RATE", value: Number(value) };
    await ctx.out.outcome(`${id}: last active hour error rate ${value}%`, obj);
    return 0;
  },
});

/** Create Webhook (POST `/v1/webhooks`); `--format json` prints the object as the platform returned it. */
const create = leaf({
  summary: "Create a webhook endpoint (Create Webhook).",
  usage: "--url U --events E1,E2 [--description D] [--disabled] [--idempotencyKey K]",
  description: "Prints the new webhook; its id is what the other verbs take as --webhookId.\n" +
    "--disabled creates it DISABLED (enable it later with `service webhooks enable`).",
  flags: {
    ...connectionFlags,
    ...formatFlag,
    url: {
      type: "string",
      placeholder: "URL",
      required: true,
      description: "Where deliveries are POSTed.",
    },
    events: {
      type: "list",
      placeholder: "E1,E2",
      description: "Event types to deliver (comma-separated), e.g. transaction.created.",
    },
    description: { type: "string", placeholder: "TEXT", description: "Free text." },
    disabled: { type: "boolean", description: "Create it DISABLED (enabled=false)." },
    ...idempotencyFlag,
  },
  examples: [
    "service webhooks create --url https://example.com/hook --events transaction.created --format json",
    "service webhooks create --url http://127.0.0.1:4000/ --events transaction.created,transaction.status.updated --description dev",
  ],
  async run({ flags }, ctx) {
    const url = checkEndpointUrl(flags.url);
    const events = checkEvents(flags.events, ctx.path);
    const { client, api } = await platformApi(flags, ctx);
    const hook = await api.createWebhook(client, {
      url,
      events,
      ...(flags.description !== undefined ? { description: flags.description } : {}),
      ...(flags.disabled ? { enabled: false } : {}),
    }, flags.idempotencyKey);
    await ctx.out.object(hook);
    return 0;
  },
});

/** Update Webhook (PATCH) of the fields given, and nothing else. */
const update = leaf({
  summary: "Change a webhook endpoint's url, events, description or enabled (PATCH).",
  usage: "--webhookId W [--url U] [--events E,...] [--description D] [--enabled true|false]",
  description: "Only the fields given are sent. --enabled true reactivates a suspended endpoint.",
  flags: {
    ...webhookVerbFlags,
    url: { type: "string", placeholder: "URL", description: "The new URL." },
    events: {
      type: "list",
      placeholder: "E1,E2",
      description: "The new event types (replace the old ones).",
    },
    description: { type: "string", placeholder: "TEXT", description: "The new description." },
    enabled: {
      type: "string",
      choices: ["true", "false"],
      placeholder: "BOOL",
      description: "Enable or disable.",
    },
  },
  examples: [
    "service webhooks update --webhookId $W --events transaction.created,transaction.status.updated",
    "service webhooks update --webhookId $W --url https://example.com/new --enabled true",
  ],
  async run({ flags, given }, ctx) {
    const patch: { url?: string; events?: string[]; description?: string; enabled?: boolean } = {};
    if (flags.url !== undefined) patch.url = checkEndpointUrl(flags.url);
    if (given.has("events")) patch.events = checkEvents(flags.events, ctx.path);
    if (flags.description !== undefined) patch.description = flags.description;
    if (flags.enabled !== undefined) patch.enabled = flags.enabled === "true";
    if (Object.keys(patch).length === 0) {
      throw new UsageError(
        `Nothing to change for "${ctx.path}": give --url, --events, --description or --enabled.`,
      );
    }
    const { client, api } = await platformApi(flags, ctx);
    await ctx.out.object(await api.updateWebhook(client, flags.webhookId, patch));
    return 0;
  },
});

/** Reads one line from standard input (up to a newline or the end). */
async function readLine(io: Io): Promise<string> {
  let text = "";
  for await (const chunk of io.stdin.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    if (text.includes("\n")) break;
  }
  return text.split("\n")[0].trim();
}

/**
 * Delete Webhook. On a terminal it asks first (`y` or `yes`); in a script it needs `--yes`, else
 * a usage error (exit 2) before anything is sent.
 */
const remove = leaf({
  summary: "Delete a webhook endpoint (asks on a terminal; --yes in scripts).",
  usage: "--webhookId W [--yes]",
  description: "Without a terminal, --yes is required (exit 2 otherwise); nothing is sent before.",
  flags: {
    ...webhookVerbFlags,
    yes: { type: "boolean", short: "y", description: "Do not ask." },
  },
  examples: ["service webhooks delete --webhookId $W --yes"],
  async run({ flags }, ctx) {
    const id = flags.webhookId;
    if (!flags.yes) {
      if (!ctx.io.stdinIsTerminal) {
        throw new UsageError(
          `"${ctx.path}" asks before deleting, and standard input is not a terminal: add --yes.`,
        );
      }
      await ctx.out.clearProgress();
      await writeAll(ctx.io.stderr, `Delete webhook ${id}? [y/N] `);
      const answer = (await readLine(ctx.io)).toLowerCase();
      if (answer !== "y" && answer !== "yes") {
        throw new CliError(`Not deleted: webhook ${id} is unchanged.`, ExitCode.failed);
      }
    }
    const { client, api } = await platformApi(flags, ctx);
    const gone = await api.deleteWebhook(client, id);
    const obj = { deleted: true, id, ...(gone ? { webhook: gone } : {}) };
    await ctx.out.outcome(`${id}: deleted`, obj);
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
    create: { ...create, summary: "Create an endpoint (--url, --events)." },
    update: { ...update, summary: "Change an endpoint's url, events, description or enabled." },
    delete: { ...remove, summary: "Delete an endpoint (asks on a terminal; --yes in scripts)." },
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
