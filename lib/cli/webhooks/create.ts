/**
 * `service webhooks create --url U --events E1,E2 [--description D] [--disabled]`:
 * Create Webhook (POST `/v1/webhooks`). Prints the webhook (with its `id`);
 * `--format json` prints the object as the platform returned it.
 *
 * @module
 */

import { connectionFlags, formatFlag, leaf, platformClient } from "../command.ts";
import { UsageError } from "../errors.ts";
import { checkEndpointUrl, checkEvents } from "./common.ts";

/** The `create` verb. */
export const createCommand = leaf({
  summary: "Create a webhook endpoint (Create Webhook).",
  usage: "--url U --events E1,E2 [--description D] [--disabled] [--idempotencyKey K]",
  description: "Prints the new webhook; its id is what the other verbs take as --webhookId.\n" +
    "--disabled creates it DISABLED (enable it later with `service webhooks enable`).",
  flags: {
    ...connectionFlags,
    ...formatFlag,
    url: { type: "string", placeholder: "URL", description: "Where deliveries are POSTed." },
    events: {
      type: "list",
      placeholder: "E1,E2",
      description: "Event types to deliver (comma-separated), e.g. transaction.created.",
    },
    description: { type: "string", placeholder: "TEXT", description: "Free text." },
    disabled: { type: "boolean", description: "Create it DISABLED (enabled=false)." },
    idempotencyKey: {
      type: "string",
      placeholder: "KEY",
      description:
        "Idempotency-Key to send (default: a fresh UUID, reused by this command's retries).",
    },
  },
  examples: [
    "service webhooks create --url https://example.com/hook --events transaction.created --format json",
    "service webhooks create --url http://127.0.0.1:4000/ --events transaction.created,transaction.status.updated --description dev",
  ],
  async run({ flags }, ctx) {
    if (!flags.url) {
      throw new UsageError(
        `Missing --url for "${ctx.path}": give the endpoint's URL, e.g. --url https://example.com/hook.`,
      );
    }
    const url = checkEndpointUrl(flags.url);
    const events = checkEvents(flags.events, ctx.path);
    const client = await platformClient(flags, ctx);
    const { createWebhook } = await import("../../platform/mod.ts");
    const hook = await createWebhook(client, {
      url,
      events,
      ...(flags.description !== undefined ? { description: flags.description } : {}),
      ...(flags.disabled ? { enabled: false } : {}),
    }, flags.idempotencyKey);
    await ctx.out.object(hook);
    return 0;
  },
});
