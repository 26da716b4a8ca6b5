/**
 * Where the platform's own records and the replay of its attempts disagree,
 * said in words rather than guessed away (issue 27): the endpoint's status
 * now against the replay's last decision, attempts the platform made while
 * the replay had the endpoint suspended, and notifications whose listed
 * attempts do not account for their status (attempts the API does not list).
 *
 * @module
 */

import { iso, type SimulationResult } from "../webhooks/mod.ts";
import { type PlatformFacts, RETRY_LOOKBACK_MS } from "./platform_log.ts";
import type { WindowWitness } from "./window_witness.ts";

/** One finding. */
export interface Finding {
  /** `agree` (the platform confirms the replay) or a disagreement's kind. */
  kind: "agree" | "status" | "in-flight" | "suppressed" | "unlisted-attempts" | "reactivated";
  /** The endpoint. */
  webhookId: string;
  /** In words. */
  message: string;
}

/**
 * Compares the replay of one endpoint's window with what the platform
 * says about it.
 *
 * @example
 * ```ts
 * import type { SimulationResult } from "../webhooks/mod.ts";
 * import { type PlatformFacts, RETRY_LOOKBACK_MS } from "./platform_log.ts";
 * import type { WindowWitness } from "./window_witness.ts";
 * declare const result: SimulationResult, facts: PlatformFacts, witness: WindowWitness;
 * declare const from: number; // the window's start (ms)
 * for (const f of platformFindings(result, facts, witness, from)) console.log(f.message);
 * ```
 */
export function platformFindings(
  result: SimulationResult,
  facts: PlatformFacts,
  witness: WindowWitness,
  from: number,
): Finding[] {
  const w = facts.webhook;
  const webhookId = w.id;
  const out: Finding[] = [];
  const say = (kind: Finding["kind"], message: string) => out.push({ kind, webhookId, message });
  const ep = result.endpoints.find((e) => e.webhookId === webhookId);
  const replayStatus = ep?.policies[0].state.status ?? "ENABLED";
  const events = result.policies[0].events.filter((e) => e.webhookId === webhookId);
  const last = events[events.length - 1];
  const lastSuspension = last?.type === "suspended" ? last : undefined;
  const updated = w.updatedAt;
  const updatedText = updated === undefined ? "" : ` (last updated ${iso(updated)})`;

  // what the API lets us check about a difference: unlisted attempts, or nothing
  const unchecked = facts.gapCount > 0
    ? `; ${facts.gapCount} notification(s) have attempts the API does not list (below), which the replay cannot count`
    : "; the attempts the API lists do not account for it, and the API gives nothing more to check";
  if (w.status === "SUSPENDED" && replayStatus !== "SUSPENDED") {
    const before = updated !== undefined && updated < from;
    say(
      "status",
      `The platform has the endpoint SUSPENDED${updatedText}, but the replay of the window does not end suspended${
        before
          ? ": it was suspended before the window began; widen --since/--from to include it."
          : `${unchecked}.`
      }`,
    );
  } else if (w.status === "SUSPENDED" && lastSuspension !== undefined) {
    if (updated !== undefined && updated < lastSuspension.time) {
      say(
        "status",
        `The platform suspended the endpoint at ${iso(updated)}, before the attempt at ${
          iso(lastSuspension.time)
        } at which the replay suspends it${unchecked}.`,
      );
    } else {
      say(
        "agree",
        `The platform agrees: it has the endpoint SUSPENDED since ${
          updated === undefined ? "an unstated time" : iso(updated)
        }${
          updated === undefined
            ? ""
            : ` (${updated - lastSuspension.time} ms after that attempt was sent)`
        }, as the replay decides at ${iso(lastSuspension.time)}.`,
      );
    }
  } else if (w.status !== "SUSPENDED" && lastSuspension !== undefined) {
    if (updated !== undefined && updated >= lastSuspension.time) {
      say(
        "reactivated",
        `The replay ends with the endpoint suspended since ${
          iso(lastSuspension.time)
        }; the platform shows it ${w.status}${updatedText}: it was reactivated after that, which the API does not list (a replay of a --save'd log can be given the time as a line {"webhookId":..,"sentTime":..,"action":"enable"}).`,
      );
    } else {
      say(
        "status",
        `The replay suspends the endpoint at ${
          iso(lastSuspension.time)
        }, but the platform shows it ${w.status}${updatedText}, not updated since: the platform did not suspend it there${unchecked}.`,
      );
    }
  }

  // attempts sent after the replay's suspension but before the platform's took effect: before
  // the deciding outcome came in (sentTime + duration), or before the platform recorded the
  // suspension it shows now (it decides as outcomes come in, several deliveries at once)
  const flying = witness.inFlight.get(webhookId);
  const sup = witness.suppressed.get(webhookId);
  const platformAt = w.status === "SUSPENDED" && updated !== undefined ? updated : -Infinity;
  const early = (witness.suppressedTimes.get(webhookId) ?? []).filter(([t]) => t <= platformAt);
  const inFlight = (flying?.count ?? 0) + early.length;
  if (inFlight > 0) {
    const first = flying ?? { first: early[0][0], line: early[0][1], decidedAt: NaN };
    const known = [
      Number.isNaN(first.decidedAt)
        ? ""
        : `before the outcome that suspends it in the replay came in (${
          iso(first.decidedAt)
        }: that attempt's sentTime plus its duration)`,
      early.length > 0 ? `before the platform recorded the suspension (${iso(platformAt)})` : "",
    ].filter((x) => x !== "").join(", or ");
    say(
      "in-flight",
      `${inFlight} attempt(s), the first sent at ${
        iso(first.first)
      } (line ${first.line}), were already in flight when the endpoint was suspended: sent after the attempt at which the replay suspends it but ${known}. The platform delivers several at once and decides as each outcome comes in; the replay counts them as suppressed.`,
    );
  }
  const later = (sup?.count ?? 0) - early.length;
  if (sup !== undefined && later > 0) {
    const kept = witness.suppressedTimes.get(webhookId) ?? [];
    const [t, line] = kept[early.length] ?? [sup.first, sup.line];
    say(
      "suppressed",
      `The platform made ${later} attempt(s) after the endpoint's suspension, the first at ${
        iso(t)
      } (line ${line})${
        Number.isNaN(sup.decidedAt)
          ? " (the attempts give no duration, so in-flight ones cannot be told apart)"
          : ""
      }, which the replay counts as suppressed. ${
        out.some((f) => f.kind === "reactivated")
          ? "The platform shows the endpoint reactivated since (above)."
          : "The API does not list reactivations, so why it sent them cannot be checked here."
      }`,
    );
  }

  if (facts.gapCount > 0) {
    const shown = facts.gaps.slice(0, 3).map((g) => `${g.notificationId}: ${g.what}`).join("; ");
    say(
      "unlisted-attempts",
      `${facts.gapCount} notification(s) have attempts the API does not list (${shown}${
        facts.gapCount > 3 ? "; ..." : ""
      }): the replay cannot count them.`,
    );
  }
  return out;
}

/**
 * The platform's side of a read in words (the table view and `explain`):
 * the endpoint's status now, the notifications read and their statuses,
 * the attempts inside the window.
 *
 * @example
 * ```ts
 * import { type PlatformFacts, RETRY_LOOKBACK_MS } from "./platform_log.ts";
 * declare const facts: PlatformFacts;
 * platformSummary(facts, Date.now() - 86_400_000, Date.now());
 * ```
 */
export function platformSummary(f: PlatformFacts, from: number, to: number): string {
  const statuses = Object.entries(f.statuses).sort().map(([s, n]) => `${n} ${s}`).join(", ");
  return `The platform: endpoint ${f.webhook.id} is ${f.webhook.status} now; ${f.notifications} notification(s) created from ${
    iso(Math.max(0, from - RETRY_LOOKBACK_MS))
  } (8 h before the window, for their retries) to ${iso(to)}${
    statuses ? ` (${statuses})` : ""
  }, ${f.attempts} of their ${f.attemptsListed} attempt(s) sent inside the window.`;
}
