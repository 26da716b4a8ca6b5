/**
 * `service webhooks update --webhookId W [--url U] [--events E,...]
 * [--description D] [--enabled true|false]`: Update Webhook (PATCH) of the
 * fields given, and nothing else.
 *
 * @module
 */

import { leaf, platformClient } from "../command.ts";
import { UsageError } from "../errors.ts";
import { checkEndpointUrl, checkEvents, webhookVerbFlags } from "./common.ts";

/** The `update` verb. */
export const updateCommand = leaf({
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
    const id = flags.webhookId;
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
    const client = await platformClient(flags, ctx);
    const { updateWebhook } = await import("../../platform/mod.ts");
    await ctx.out.object(await updateWebhook(client, id, patch));
    return 0;
  },
});
