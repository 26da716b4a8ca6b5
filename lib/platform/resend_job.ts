/**
 * Follows a platform resend job (of resend failed or resend by query) to its
 * end: polls its status with a growing delay (200 ms doubling up to
 * `maxDelayMs`) until it is COMPLETED or FAILED, or until it makes no
 * progress (neither its status nor its counts change) for `waitTimeoutMs`.
 *
 * @module
 */

import type { PlatformClient } from "./client.ts";
import type { ResendJob } from "./schemas.ts";
import { getResendJob } from "./webhooks.ts";

/** How long a follower waits for a job that makes no progress, by default: 10 minutes. */
export const DEFAULT_WAIT_TIMEOUT_MS = 600_000;

/** What {@linkcode followResendJob} ends with. */
export interface FollowedJob {
  /** The job as last read. */
  job: ResendJob;
  /** True when it was given up: still running, with no progress for `waitTimeoutMs`. */
  stalled: boolean;
}

/** How {@linkcode followResendJob} polls. */
export interface FollowOptions {
  /** The longest delay between two polls. */
  maxDelayMs: number;
  /** Give up after this long without progress (default {@linkcode DEFAULT_WAIT_TIMEOUT_MS}). */
  waitTimeoutMs?: number;
  /** Called with the job after each poll. */
  onPoll?: (job: ResendJob) => void | Promise<void>;
}

/**
 * Polls job `jobId` of `webhookId` until it ends or stalls.
 *
 * @example
 * ```ts
 * import type { PlatformClient } from "./mod.ts";
 * declare const client: PlatformClient;
 * const { job, stalled } = await followResendJob(
 *   client,
 *   { webhookId: "w1", jobId: "j1", kind: "query" },
 *   { maxDelayMs: 1000, onPoll: (j) => console.log(j.status, j.processed, j.total) },
 * );
 * ```
 */
export async function followResendJob(
  client: PlatformClient,
  target: { webhookId: string; jobId: string; kind: "failed" | "query" },
  options: FollowOptions,
): Promise<FollowedJob> {
  const waitTimeoutMs = options.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  const now = () => performance.now();
  let delay = 200;
  let last = "";
  let movedAt = now();
  for (;;) {
    const job = await getResendJob(client, target.webhookId, target.jobId, target.kind);
    await options.onPoll?.(job);
    const state = `${job.status} ${job.processed}/${job.total}`;
    if (state !== last) movedAt = now();
    last = state;
    if (job.status === "COMPLETED" || job.status === "FAILED") return { job, stalled: false };
    if (now() - movedAt >= waitTimeoutMs) return { job, stalled: true };
    await new Promise((res) => setTimeout(res, Math.min(delay, waitTimeoutMs)));
    delay = Math.min(options.maxDelayMs, delay * 2);
  }
}
