/**
 * Where the platform's own records and the replay of its attempts disagree,
 * said in words rather than guessed away (issue 27): the endpoint's status
 * now against the replay's last decision, attempts the platform made while
 * the replay had the endpoint suspended, and notifications whose listed
 * attempts do not account for their status (attempts the API does not list).
 *
 * @module
 */

import { iso, type SimulationResult } from "../../webhooks/mod.ts";
import type { PlatformFacts } from "./platform_log.ts";
import type { WindowWitness } from "./window_witness.ts";

/** One finding. */
export interface Finding {
  /** `agree` (the platform confirms the replay) or a disagreement's kind. */
  kind: "agree" | "status" | "suppressed" | "unlisted-attempts" | "reactivated";
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
 * import type { SimulationResult } from "../../webhooks/mod.ts";
 * import type { PlatformFacts } from "./platform_log.ts";
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

  if (w.status === "SUSPENDED" && replayStatus !== "SUSPENDED") {
    const before = updated !== undefined && updated < from;
    say(
      "status",
      `The platform has the endpoint SUSPENDED${updatedText}, but the replay of the window does not end suspended${
        before
          ? ": it was suspended before the window began; widen --since/--from to include it."
          : ": an attempt the API does not list, or a rule that differs from breaker.md, made the difference."
      }`,
    );
  } else if (w.status === "SUSPENDED" && lastSuspension !== undefined) {
    if (updated !== undefined && updated < lastSuspension.time) {
      say(
        "status",
        `The platform suspended the endpoint at ${iso(updated)}, before the attempt at ${
          iso(lastSuspension.time)
        } at which the replay suspends it: the platform counted attempts the API does not list, or decided otherwise.`,
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
        }, but the platform shows it ${w.status}${updatedText}, not updated since: the platform did not suspend it there.`,
      );
    }
  }

  const sup = witness.suppressed.get(webhookId);
  if (sup !== undefined) {
    say(
      "suppressed",
      `The platform made ${sup.count} attempt(s), the first at ${
        iso(sup.first)
      } (line ${sup.line}), while the replay had the endpoint suspended: either it was reactivated in between (the API does not list reactivations) or the platform did not suspend it when the replay does.`,
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
