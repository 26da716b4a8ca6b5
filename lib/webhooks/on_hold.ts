/**
 * Where a notification still to be delivered waits: an endpoint that is
 * not ENABLED (SUSPENDED by the breaker, DISABLED, or gone) receives
 * nothing, so its notifications wait `ON_HOLD` until it is enabled again
 * (breaker.md §3: "While SUSPENDED no attempt is made"). Pure, beside the
 * breaker's rules; the emulator applies it when it creates a notification,
 * resends one, and records an attempt that leaves one still to deliver.
 *
 * @module
 */

import type { NotificationStatus, WebhookStatus } from "../core/mod.ts";

/**
 * The status of a notification with attempts still to come, given its
 * endpoint's status (`undefined`: the endpoint is gone): `IN_PROGRESS` for
 * an ENABLED endpoint, else `ON_HOLD`. A finished status (`COMPLETED`,
 * `FAILED`) stays as it is.
 *
 * @example
 * ```ts
 * waitingStatus("IN_PROGRESS", "ENABLED"); // "IN_PROGRESS"
 * waitingStatus("IN_PROGRESS", "SUSPENDED"); // "ON_HOLD"
 * waitingStatus("FAILED", "SUSPENDED"); // "FAILED"
 * ```
 */
export function waitingStatus(
  status: NotificationStatus,
  endpoint: WebhookStatus | undefined,
): NotificationStatus {
  if (status !== "IN_PROGRESS" && status !== "ON_HOLD") return status;
  return endpoint === "ENABLED" ? "IN_PROGRESS" : "ON_HOLD";
}
