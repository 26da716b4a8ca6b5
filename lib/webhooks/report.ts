/**
 * The records `breaker simulate` prints (`../shared/spec/breaker.md` §5):
 * suspension and re-enable events, the per-notification projection, the
 * summary, and the comparison of two policies. Plain objects, ready for
 * `JSON.stringify` (times as ISO 8601 UTC with milliseconds).
 *
 * @module
 */

import { BadRequestError } from "../core/mod.ts";
import { formatDuration } from "../core/durations.ts";
import type { BreakerConfig } from "./circuit_breaker.ts";
import type { NotificationReport } from "./notification_table.ts";
import { iso, type SimulationEvent, type SimulationResult } from "./simulate.ts";

/**
 * The §5 line of one event: `suspended` (with `bandSince` on `sustained`
 * only) or `enabled`.
 *
 * @example
 * ```ts
 * eventRecord({ type: "enabled", webhookId: "w1", time: 0, line: 3 });
 * // { type: "enabled", webhookId: "w1", time: "1970-01-01T00:00:00.000Z" }
 * ```
 */
export function eventRecord(e: SimulationEvent): Record<string, unknown> {
  if (e.type === "enabled") return { type: "enabled", webhookId: e.webhookId, time: iso(e.time) };
  const r: Record<string, unknown> = {
    type: "suspended",
    webhookId: e.webhookId,
    time: iso(e.time),
    reason: e.reason,
    errorRate: e.errorRate,
    attempts: e.attempts,
    errors: e.errors,
  };
  if (e.reason === "sustained" && e.bandSince !== undefined) r.bandSince = iso(e.bandSince);
  return r;
}

/**
 * The §5 `notification` line of one notification.
 *
 * @example
 * ```ts
 * notificationRecord({ notificationId: "n1", webhookId: "w1", progress: { status: "COMPLETED", attempts: 1, lastSentTime: 0, nextAttemptAt: null } });
 * ```
 */
export function notificationRecord(n: NotificationReport): Record<string, unknown> {
  return {
    type: "notification",
    notificationId: n.notificationId,
    webhookId: n.webhookId,
    status: n.progress.status,
    attempts: n.progress.attempts,
    lastSentTime: n.progress.lastSentTime === null ? null : iso(n.progress.lastSentTime),
    nextAttemptAt: n.progress.status === "IN_PROGRESS" && n.progress.nextAttemptAt !== null
      ? iso(n.progress.nextAttemptAt)
      : null,
  };
}

/**
 * The §5 `notification` lines of the notifications the result kept, in
 * first-seen order (none unless the simulation kept notifications), made
 * one at a time.
 *
 * @example
 * ```ts
 * import type { SimulationResult } from "./simulate.ts";
 * declare const result: SimulationResult;
 * for (const n of notificationRecords(result)) console.log(JSON.stringify(n));
 * ```
 */
export function* notificationRecords(
  result: SimulationResult,
): Generator<Record<string, unknown>> {
  if (result.notifications === null) return;
  for (const n of result.notifications.entries()) yield notificationRecord(n);
}

/**
 * The §5 summary line of the first policy.
 *
 * @example
 * ```ts
 * import type { SimulationResult } from "./simulate.ts";
 * declare const result: SimulationResult;
 * summaryRecord(result, 0); // { type: "summary", webhooks, attempts, suppressed, suspensions, invalidLines }
 * ```
 */
export function summaryRecord(
  result: SimulationResult,
  invalidLines: number,
): Record<string, unknown> {
  const a = result.policies[0];
  return {
    type: "summary",
    webhooks: result.webhooks,
    attempts: result.attempts,
    suppressed: a.suppressed,
    suspensions: a.suspensions,
    invalidLines,
  };
}

/** How one endpoint fares under policy A (the flags) and policy B (`--compare`). */
export interface EndpointComparison {
  /** The endpoint. */
  webhookId: string;
  /** Suspensions under policy A. */
  suspensionsA: number;
  /** Suspensions under policy B. */
  suspensionsB: number;
  /** Suspensions under A that B does not have at the same time. */
  avoided: number[];
  /** Suspensions under B that A does not have at the same time. */
  gained: number[];
  /** Attempts policy A suppressed. */
  suppressedA: number;
  /** Attempts policy B suppressed. */
  suppressedB: number;
}

/**
 * Compares the two policies of a result, per endpoint that was suspended
 * under either. Suspensions are matched by time: one at the same instant
 * under both is unchanged; one only under A is avoided by B, one only under
 * B is gained.
 *
 * @example
 * ```ts
 * import type { SimulationResult } from "./simulate.ts";
 * declare const result: SimulationResult;
 * compareEndpoints(result).filter((c) => c.avoided.length > 0);
 * ```
 */
export function compareEndpoints(result: SimulationResult): EndpointComparison[] {
  if (result.policies.length < 2) throw new BadRequestError("The result has a single policy.");
  const out: EndpointComparison[] = [];
  for (const ep of result.endpoints) {
    const [a, b] = ep.policies;
    if (a.suspensions === 0 && b.suspensions === 0) continue;
    const avoided: number[] = [];
    const gained: number[] = [];
    // both lists are sorted: merge
    let i = 0;
    let j = 0;
    const ta = a.suspendedPeriods.map(([t]) => t);
    const tb = b.suspendedPeriods.map(([t]) => t);
    while (i < ta.length || j < tb.length) {
      if (j >= tb.length || (i < ta.length && ta[i] < tb[j])) avoided.push(ta[i++]);
      else if (i >= ta.length || tb[j] < ta[i]) gained.push(tb[j++]);
      else {
        i++;
        j++;
      }
    }
    out.push({
      webhookId: ep.webhookId,
      suspensionsA: a.suspensions,
      suspensionsB: b.suspensions,
      avoided,
      gained,
      suppressedA: a.suppressed,
      suppressedB: b.suppressed,
    });
  }
  return out;
}

/**
 * The `comparison` line of one endpoint (times as ISO).
 *
 * @example
 * ```ts
 * import type { SimulationResult } from "./simulate.ts";
 * declare const result: SimulationResult;
 * compareEndpoints(result).map(comparisonRecord);
 * ```
 */
export function comparisonRecord(c: EndpointComparison): Record<string, unknown> {
  // the fields keep their order (compareEndpoints makes them so): only the times change
  return { type: "comparison", ...c, avoided: c.avoided.map(iso), gained: c.gained.map(iso) };
}

function describePolicy(c: BreakerConfig): Record<string, unknown> {
  return {
    window: formatDuration(c.windowMs),
    immediateAbove: c.immediateAbove,
    sustainedFrom: c.sustainedFrom,
    sustainedFor: formatDuration(c.sustainedForMs),
    minAttempts: c.minAttempts,
    bandResetsAfterIdle: c.bandResetsAfterIdleMs === null
      ? null
      : formatDuration(c.bandResetsAfterIdleMs),
  };
}

/**
 * The summary line of a comparison (§5): both policies, their suspensions
 * and suppressed attempts, and what B avoids and adds.
 *
 * @example
 * ```ts
 * import type { SimulationResult } from "./simulate.ts";
 * declare const result: SimulationResult; // replayed under two policies
 * comparisonSummary(result, compareEndpoints(result), 0).avoided;
 * ```
 */
export function comparisonSummary(
  result: SimulationResult,
  rows: EndpointComparison[],
  invalidLines: number,
): { avoided: number; gained: number; webhooksChanged: number } & Record<string, unknown> {
  const [a, b] = result.policies;
  const avoided = rows.reduce((n, r) => n + r.avoided.length, 0);
  const gained = rows.reduce((n, r) => n + r.gained.length, 0);
  return {
    type: "summary",
    webhooks: result.webhooks,
    attempts: result.attempts,
    invalidLines,
    A: { policy: describePolicy(a.config), suspensions: a.suspensions, suppressed: a.suppressed },
    B: { policy: describePolicy(b.config), suspensions: b.suspensions, suppressed: b.suppressed },
    avoided,
    gained,
    webhooksChanged: rows.filter((r) => r.avoided.length || r.gained.length).length,
  };
}
