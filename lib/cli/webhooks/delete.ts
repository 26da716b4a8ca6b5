/**
 * `service webhooks delete --webhookId W [--yes]`: Delete Webhook. On a
 * terminal it asks first (answer `y` or `yes`); in a script (standard input
 * not a terminal) it needs `--yes`, else it stops with a usage error (exit 2)
 * before anything is sent.
 *
 * @module
 */

import { leaf, platformClient } from "../command.ts";
import { CliError, ExitCode, UsageError } from "../errors.ts";
import { type Io, writeAll } from "../output.ts";
import { webhookVerbFlags } from "./common.ts";

/** Reads one line from standard input (up to a newline or the end). */
async function readLine(io: Io): Promise<string> {
  const reader = io.stdin.getReader();
  const dec = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
      if (text.includes("\n")) break;
    }
  } finally {
    reader.releaseLock();
  }
  return text.split("\n")[0].trim();
}

/** The `delete` verb. */
export const deleteCommand = leaf({
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
    const client = await platformClient(flags, ctx);
    const { deleteWebhook } = await import("../../platform/mod.ts");
    const gone = await deleteWebhook(client, id);
    if (ctx.out.format === "table") await ctx.out.text(`${id}: deleted`);
    else await ctx.out.object({ deleted: true, id, ...(gone ? { webhook: gone } : {}) });
    return 0;
  },
});
