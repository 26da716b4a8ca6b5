/**
 * Follows a platform resend job (of resend failed or resend by query) to its
 * end: polls its status with a growing delay (200 ms doubling up to
 * `maxDelayMs`), shows `job J: STATUS processed/total` as progress on a
 * terminal or as a log line whenever it changes otherwise (the final line
 * stays on standard error either way), and returns the final job. A FAILED job is the caller's to report.
 *
 * @module
 */

import type { Output } from "../output.ts";
import type { PlatformClient, ResendJob } from "../../platform/mod.ts";

/** Follows job `jobId` of `webhookId` until COMPLETED or FAILED. */
export async function followResendJob(
  ctx: { out: Output },
  client: PlatformClient,
  job: { webhookId: string; jobId: string; kind: "failed" | "query" },
  maxDelayMs: number,
): Promise<ResendJob> {
  const { getResendJob } = await import("../../platform/mod.ts");
  let delay = 200;
  let last = "";
  for (;;) {
    const j = await getResendJob(client, job.webhookId, job.jobId, job.kind);
    const line = `job ${j.jobId}: ${j.status} ${j.processed}/${j.total}`;
    if (ctx.out.io.stderrIsTerminal) await ctx.out.progress(line);
    else if (line !== last) await ctx.out.log(line);
    last = line;
    if (j.status === "COMPLETED" || j.status === "FAILED") {
      await ctx.out.clearProgress();
      // the final line once: on a terminal the progress line was just erased
      if (ctx.out.io.stderrIsTerminal) await ctx.out.log(line);
      return j;
    }
    await new Promise((res) => setTimeout(res, delay));
    delay = Math.min(maxDelayMs, delay * 2);
  }
}
