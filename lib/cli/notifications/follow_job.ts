/**
 * `--wait` of the resend verbs: follows a platform resend job with the domain's
 * {@linkcode followResendJob}, its state as progress on a terminal, else as a log line when it
 * changes. A job that makes no progress for `--waitTimeout` is given up (exit 7), saying that
 * it may still finish and how to look at it again.
 *
 * @module
 */

import { CliError, ExitCode } from "../errors.ts";
import type { Output } from "../output.ts";
import type { FlagSpecs } from "../flags.ts";
import type { PlatformClient, ResendJob } from "../../platform/mod.ts";

/** `--pollingInterval` and `--waitTimeout` (default: 10 minutes), for the verbs with `--wait`. */
export const waitFlags = {
  pollingInterval: {
    type: "duration",
    default: 1000,
    min: 100,
    max: 600_000,
    description: "With --wait: longest time between job polls.",
  },
  waitTimeout: {
    type: "duration",
    default: 600_000,
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
  target: { webhookId: string; jobId: string; kind: "failed" | "query" },
  { maxDelayMs, waitTimeoutMs, json, idempotencyKey, again }: {
    maxDelayMs: number;
    waitTimeoutMs: number;
    /** Print the final job on standard output. */
    json: boolean;
    idempotencyKey?: string;
    /** What to do after a FAILED job. */
    again: string;
  },
): Promise<number> {
  const { followResendJob } = await import("../../platform/mod.ts");
  const out = ctx.out;
  const lineOf = (j: ResendJob) => `job ${j.jobId}: ${j.status} ${j.processed}/${j.total}`;
  let last = "";
  const { job: j, stalled } = await followResendJob(client, target, {
    maxDelayMs,
    waitTimeoutMs,
    onPoll: async (j) => {
      const line = lineOf(j);
      if (out.io.stderrIsTerminal) await out.progress(line);
      else if (line !== last) await out.log(line);
      last = line;
    },
  });
  await out.clearProgress();
  if (stalled) {
    throw new CliError(
      `Gave up waiting for the resend job ${j.jobId}: still ${j.status} at ${j.processed} of ${j.total} ` +
        `after ${
          Math.round(waitTimeoutMs / 1000)
        } s without progress (--waitTimeout). It may still finish on the platform; ` +
        `running the same command again (same --idempotencyKey) follows it.`,
      ExitCode.timeout,
    );
  }
  // the final line once: on a terminal the progress line was just erased
  if (out.io.stderrIsTerminal) await out.log(lineOf(j));
  if (json) await out.object({ accepted: true, ...j, idempotencyKey });
  if (j.status === "FAILED") {
    throw new CliError(
      `The resend job ${j.jobId} FAILED after ${j.processed} of ${j.total}. ${again}`,
      ExitCode.failed,
    );
  }
  return 0;
}
