/**
 * The e-mail the workspace admins get when the breaker suspends one of their
 * endpoints. Its text is built from the breaker's configuration in force
 * (thresholds, sustain time, window), so a breaker configured otherwise is
 * described as it is; with breaker.md's defaults it reads "error rate above
 * 80%" / "error rate at or above 50% for 4 hours" and "in the last hour".
 *
 * @module
 */

import type { BreakerConfig } from "../../webhooks/mod.ts";

/** The suspension being told: what the breaker reported. */
export interface Suspension {
  /** Which rule suspended the endpoint. */
  reason: "immediate" | "sustained";
  /** errors / attempts of the window at the suspension. */
  errorRate: number;
  /** The window's errors. */
  errors: number;
  /** The window's attempts. */
  attempts: number;
}

/** One e-mail of the outbox, before it is addressed. */
export interface SuspensionMail {
  /** Subject line. */
  subject: string;
  /** Plain-text body, lines joined with `\n`. */
  body: string;
}

const UNITS: [number, string][] = [
  [86_400_000, "day"],
  [3_600_000, "hour"],
  [60_000, "minute"],
  [1000, "second"],
];

/** `4 hours`, `1 hour`, `90 minutes`, `250 milliseconds`. */
function spokenDuration(ms: number): string {
  for (const [size, name] of UNITS) {
    if (ms >= size && ms % size === 0) {
      const n = ms / size;
      return `${n} ${name}${n === 1 ? "" : "s"}`;
    }
  }
  return `${ms} milliseconds`;
}

/** `the last hour`, `the last 30 minutes`. */
function lastSpan(ms: number): string {
  const d = spokenDuration(ms);
  return d.startsWith("1 ") ? `the last ${d.slice(2)}` : `the last ${d}`;
}

/** `80%`, `50%`, `62.5%`. */
function percent(fraction: number): string {
  return `${Math.round(fraction * 1000) / 10}%`;
}

/**
 * The e-mail telling that endpoint `url` (`webhookId`) was suspended at `time`
 * by a breaker configured with `config` (durations as the user configured
 * them, i.e. before any time scaling).
 *
 * @example
 * ```ts
 * const mail = suspensionMail(
 *   { url: "https://example.com/hook", webhookId: "w1", time: 0 },
 *   { reason: "immediate", errorRate: 5 / 6, errors: 5, attempts: 6 },
 *   DEFAULT_BREAKER_CONFIG,
 * );
 * mail.body; // "... Reason: error rate above 80% (5 of 6 attempts in the last hour failed, 83%). ..."
 * ```
 */
export function suspensionMail(
  endpoint: { url: string; webhookId: string; time: number },
  s: Suspension,
  config: BreakerConfig,
): SuspensionMail {
  const { url, webhookId, time } = endpoint;
  const rule = s.reason === "immediate"
    ? `error rate above ${percent(config.immediateAbove)}`
    : `error rate at or above ${percent(config.sustainedFrom)} for ${
      spokenDuration(config.sustainedForMs)
    }`;
  const pct = Math.round(s.errorRate * 100);
  return {
    subject: `Webhook endpoint suspended: ${url}`,
    body: [
      `Your webhook endpoint ${url} (id ${webhookId}) was suspended at ${
        new Date(time).toISOString()
      }.`,
      `Reason: ${rule} ` +
      `(${s.errors} of ${s.attempts} attempts in ${lastSpan(config.windowMs)} failed, ${pct}%).`,
      `No notifications are sent to it while it is suspended; they wait ON_HOLD.`,
      `Re-enable it in the console or with PATCH /v1/webhooks/${webhookId} {"enabled": true}.`,
    ].join("\n"),
  };
}
