/**
 * `service breaker explain` (and `simulate --explain`): the replay told in
 * a few sentences — when each endpoint was suspended, the error rate that
 * did it, the attempts and status codes in the window, the thresholds, and
 * which what-if policies (replayed in the same pass) would have avoided it.
 *
 * @module
 */

import { type BreakerConfig, iso, type SimulationResult } from "../webhooks/mod.ts";
import { formatDuration } from "../core/durations.ts";
import type { Witnessed } from "./window_witness.ts";

/** A what-if policy: how to ask for it, and the policy. */
export interface WhatIf {
  /** The flags that give it, e.g. `--minAttempts 20`. */
  flags: string;
  /** The policy. */
  config: BreakerConfig;
}

/**
 * The what-if policies tried next to `a`: higher minimum attempts, a higher
 * immediate threshold, a longer and a shorter window, a longer sustain time
 * (our choice of candidates), and the `--compare` policy when given.
 */
export function whatIfs(
  a: BreakerConfig,
  compare: { flags: string; config: BreakerConfig } | undefined,
): WhatIf[] {
  const out: WhatIf[] = [];
  const add = (flags: string, change: Partial<BreakerConfig>) =>
    out.push({ flags, config: { ...a, ...change } });
  for (const n of [5, 10, 20, 50]) {
    if (n > a.minAttempts) add(`--minAttempts ${n}`, { minAttempts: n });
  }
  for (const r of [0.9, 0.95]) {
    if (r > a.immediateAbove) add(`--immediateAbove ${r}`, { immediateAbove: r });
  }
  add(`--window ${formatDuration(a.windowMs * 2)}`, { windowMs: a.windowMs * 2 });
  const half = Math.round(a.windowMs / 2);
  if (a.windowMs >= 2) add(`--window ${formatDuration(half)}`, { windowMs: half });
  add(`--sustainedFor ${formatDuration(a.sustainedForMs * 2)}`, {
    sustainedForMs: a.sustainedForMs * 2,
  });
  if (compare) out.push(compare);
  return out;
}

/** What `explain` prints: the words, and the same as one JSON record. */
export interface Explanation {
  /** Sentences, one a line. */
  lines: string[];
  /** For `--format json|ndjson`. */
  record: Record<string, unknown>;
}

function pct(errors: number, attempts: number): string {
  const p = (100 * errors) / attempts;
  return Number.isInteger(p) ? `${p}%` : `${p.toFixed(1)}%`;
}

function thresholds(c: BreakerConfig): string {
  return `suspend at once when more than ${c.immediateAbove * 100}% of the attempts in the last ${
    formatDuration(c.windowMs)
  } failed, or when at least ${c.sustainedFrom * 100}% failed for ${
    formatDuration(c.sustainedForMs)
  }; evaluate from ${c.minAttempts} attempt(s) in the window${
    c.bandResetsAfterIdleMs === null
      ? ""
      : `; forget the band after ${formatDuration(c.bandResetsAfterIdleMs)} without attempts`
  }`;
}

/**
 * Tells `result` (policy 0, then `whatIf[i]` as policy i + 1) in words.
 *
 * @example
 * ```ts
 * import { DEFAULT_BREAKER_CONFIG, type SimulationResult } from "../webhooks/mod.ts";
 * import type { WindowWitness } from "./window_witness.ts";
 * declare const result: SimulationResult, witness: WindowWitness;
 * const candidates = whatIfs(DEFAULT_BREAKER_CONFIG, undefined);
 * const { lines } = explain(result, witness.suspensions, candidates);
 * ```
 */
export function explain(
  result: SimulationResult,
  witnessed: Witnessed[],
  whatIf: WhatIf[],
): Explanation {
  const a = result.policies[0];
  const range = result.timeRange;
  const lines = [
    `Replayed ${result.attempts} attempt(s) of ${result.webhooks} webhook(s)${
      range ? ` sent from ${iso(range[0])} to ${iso(range[1])}` : ""
    }.`,
    `Thresholds: ${thresholds(a.config)}.`,
  ];
  const suspensions = a.events.filter((e) => e.type === "suspended");
  if (suspensions.length === 0) {
    lines.push("No suspension: the error rate never crossed a threshold.");
    for (const ep of result.endpoints) {
      const t = ep.policies[0];
      if (t.peakRate >= 0 && t.peakAt !== null) {
        lines.push(
          `${ep.webhookId}: peak error rate ${
            pct(t.peakErrors, t.peakAttempts)
          } (${t.peakErrors} of ${t.peakAttempts} attempts) at ${iso(t.peakAt)}.`,
        );
      }
    }
  }
  for (const w of witnessed) {
    const e = w.event;
    const why = e.reason === "immediate"
      ? `above ${a.config.immediateAbove * 100}%`
      : `at or above ${a.config.sustainedFrom * 100}% since ${iso(e.bandSince!)} (${
        formatDuration(e.time - e.bandSince!)
      }, at least ${formatDuration(a.config.sustainedForMs)})`;
    lines.push(
      `${e.webhookId} was suspended at ${
        iso(e.time)
      } (${e.reason}): ${e.errors} of the ${e.attempts} attempts in the last ${
        formatDuration(a.config.windowMs)
      } failed, ${pct(e.errors, e.attempts)}, ${why}.`,
      `  The window held ${
        w.outcomes.map(([o, n]) => `${n} x ${o}`).join(", ")
      } from ${w.notifications} notification(s), sent from ${iso(w.first)} to ${
        iso(e.time)
      }; the last, line ${e.line}${
        w.last.notificationId ? ` (notification ${w.last.notificationId})` : ""
      }, was ${w.last.outcome}.`,
    );
  }
  if (suspensions.length > witnessed.length) {
    lines.push(`... and ${suspensions.length - witnessed.length} more suspension(s).`);
  }
  const tried: Record<string, unknown>[] = [];
  if (suspensions.length > 0 && whatIf.length > 0) {
    lines.push("What if:");
    whatIf.forEach((wi, i) => {
      const p = result.policies[i + 1];
      const sus = p.events.filter((e) => e.type === "suspended");
      const first = sus[0]?.time;
      let verdict: string;
      if (sus.length === 0) verdict = "avoids every suspension";
      else if (sus.length < suspensions.length) {
        verdict = `${sus.length} suspension(s) instead of ${suspensions.length}, the first at ${
          iso(first!)
        }`;
      } else if (first! > suspensions[0].time) {
        verdict = `still suspended, later: at ${iso(first!)}`;
      } else if (first! < suspensions[0].time) {
        verdict = `suspended earlier: at ${iso(first!)}`;
      } else if (sus.length > suspensions.length) verdict = `${sus.length} suspension(s)`;
      else verdict = "the same";
      lines.push(`  ${wi.flags.padEnd(24)} ${verdict}`);
      tried.push({
        flags: wi.flags,
        suspensions: sus.length,
        firstSuspension: first === undefined ? null : iso(first),
        avoidsAll: sus.length === 0,
      });
    });
    lines.push(
      "  (what-ifs replay the attempts that were made: retries and held notifications the platform did not send because the endpoint was suspended are not in the log.)",
    );
  }
  return {
    lines,
    record: {
      type: "explanation",
      attempts: result.attempts,
      webhooks: result.webhooks,
      from: range ? iso(range[0]) : null,
      to: range ? iso(range[1]) : null,
      suspensions: witnessed.map((w) => ({
        webhookId: w.event.webhookId,
        time: iso(w.event.time),
        reason: w.event.reason,
        errorRate: w.event.errorRate,
        errors: w.event.errors,
        attempts: w.event.attempts,
        line: w.event.line,
        outcomes: Object.fromEntries(w.outcomes),
        windowFrom: iso(w.first),
        notifications: w.notifications,
      })),
      whatIf: tried,
    },
  };
}
