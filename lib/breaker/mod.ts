/**
 * What `service breaker simulate|explain` does besides the rules of
 * `lib/webhooks` (which it replays): the commands in `lib/cli/breaker*`
 * parse flags and print; this area reads and witnesses.
 *
 * - `file_chunks.ts`: {@linkcode fileChunks}, a log file's bytes in one
 *   reused buffer.
 * - `platform_log.ts`: {@linkcode readPlatformLog}, an endpoint's window
 *   read from the platform (its notifications, their attempts), bounded
 *   against a misbehaving platform, put back in time order on the one heap
 *   of `lib/core`.
 * - `platform_check.ts`: {@linkcode platformFindings}, where the
 *   platform's records and the replay disagree.
 * - `window_witness.ts`: {@linkcode WindowWitness}, what the window held at
 *   each suspension (for `explain`), and `explain.ts`: the replay in words.
 * - `notification_spill.ts`, `saved_log.ts`: the `--notifications` spill
 *   file and the `--save`d log.
 * - `errors.ts`: {@linkcode BreakerError}, with a reason code.
 *
 * @example
 * ```ts
 * import { fileChunks } from "./mod.ts";
 * import { readDeliveryLog } from "../webhooks/mod.ts";
 * const stats = await readDeliveryLog(fileChunks("log.ndjson"), (r) => console.log(r.webhookId));
 * ```
 *
 * @module
 */

export { BreakerError } from "./errors.ts";
export type { BreakerErrorReason } from "./errors.ts";
export { explain, whatIfs } from "./explain.ts";
export type { Explanation, WhatIf } from "./explain.ts";
export { fileChunks, openLog } from "./file_chunks.ts";
export { NotificationSpill } from "./notification_spill.ts";
export { platformFindings, platformSummary } from "./platform_check.ts";
export type { Finding } from "./platform_check.ts";
export {
  attemptGap,
  MAX_ATTEMPTS_PER_NOTIFICATION,
  MAX_HELD,
  MAX_NOTIFICATIONS,
  MAX_PAGES,
  platformWindow,
  readPlatformLog,
  RETRY_LOOKBACK_MS,
} from "./platform_log.ts";
export type {
  AttemptGap,
  PlatformFacts,
  PlatformLogOptions,
  PlatformLogProgress,
} from "./platform_log.ts";
export { SavedLog, writeWhole } from "./saved_log.ts";
export { WindowWitness } from "./window_witness.ts";
export type { Witnessed } from "./window_witness.ts";
export { Replay } from "./replay.ts";
export type { ReplayOptions } from "./replay.ts";
// Types the exports above name, re-exported so that this barrel documents them.
export type { BaseError, BaseErrorOptions } from "../core/mod.ts";
export type * from "../platform/mod.ts";
export type * from "../webhooks/mod.ts";
