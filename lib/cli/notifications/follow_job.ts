/**
 * Follows a platform resend job (of resend failed or resend by query) to its
 * end: polls its status with a growing delay (200 ms doubling up to
 * `maxDelayMs`), shows `job J: STATUS processed/total` as progress on a
 * terminal or as a log line whenever it changes otherwise (the final line
 * stays on standard error either way), and returns the final job. A FAILED job is the caller's to report.
 * A job that makes no progress (neither its status nor its count changes) for
 * `waitTimeoutMs` (`--waitTimeout`, default {@linkcode DEFAULT_WAIT_TIMEOUT_MS})
 * is given up: a {@linkcode CliError} with the timeout exit code (7) that says
 * the job may still finish and how to look at it again.
 *
 * @module
 */

import { CliError, ExitCode } from "../errors.ts";
import type { Output } from "../output.ts";
import type { FlagSpecs } from "../flags.ts";
import type { PlatformClient, ResendJob } from "../../platform/mod.ts";

/** How long `--wait` waits for a job that makes no progress: 10 minutes. */
export const DEFAULT_WAIT_TIMEOUT_MS = 600_000;

/** `--waitTimeout`, for the verbs with `--wait`. */
export const waitTimeoutFlag = {
  waitTimeout: {
    type: "duration",
    default: DEFAULT_WAIT_TIMEOUT_MS,
    min: 1000,
    max: 86_400_000,
    placeholder: "DURATION",
    description: "With --wait: give up (exit 7) when the job makes no progress for this long.",
  },
} as const satisfies FlagSpecs;

/** Follows job `jobId` of `webhookId` until COMPLETED or FAILED, or no progress for `waitTimeoutMs`. */
export async function followResendJob(
  ctx: { out: Output },
  client: PlatformClient,
  job: { webhookId: string; jobId: string; kind: "failed" | "query" },
  maxDelayMs: number,
  waitTimeoutMs: number = DEFAULT_WAIT_TIMEOUT_MS,
): Promise<ResendJob> {
  const { getResendJob } = await import("../../platform/mod.ts");
  const now = () => performance.now();
  let delay = 200;
  let last = "";
  let movedAt = now();
  for (;;) {
    const j = await getResendJob(client, job.webhookId, job.jobId, job.kind);
    const line = `job ${j.jobId}: ${j.status} ${j.processed}/${j.total}`;
    if (ctx.out.io.stderrIsTerminal) await ctx.out.progress(line);
    else if (line !== last) await ctx.out.log(line);
    if (line !== last) movedAt = now();
    last = line;
    if (j.status === "COMPLETED" || j.status === "FAILED") {
      await ctx.out.clearProgress();
      // the final line once: on a terminal the progress line was just erased
      if (ctx.out.io.stderrIsTerminal) await ctx.out.log(line);
      return j;
    }
    if (now() - movedAt >= waitTimeoutMs) {
      await ctx.out.clearProgress();
      throw new CliError(
        `Gave up waiting for the resend job ${j.jobId}: still ${j.status} at ${j.processed} of ${j.total} ` +
          `after ${
            Math.round(waitTimeoutMs / 1000)
          } s without progress (--waitTimeout). It may still finish on the platform; ` +
          `running the same command again (same --idempotencyKey) follows it.`,
        ExitCode.timeout,
      );
    }
    await new Promise((res) => setTimeout(res, Math.min(delay, waitTimeoutMs)));
    delay = Math.min(maxDelayMs, delay * 2);
  }
}
