/**
 * The e-mail the workspace admins get when the breaker suspends one of their
 * endpoints. Its text is built from the breaker's configuration in force
 * (thresholds, sustain time, window), so a breaker configured otherwise is
 * described as it is; with breaker.md's defaults it reads "error rate above
 * 80%" / "error rate at or above 50% for 4 hours" and "in the last hour".
 * The rate is printed exactly: the window's counts, and the percentage with
 * as many decimals as it takes to differ from the threshold it is compared
 * with (80.1% is never printed as "80%"). It ends with how to reactivate:
 * the CLI command, the console and the API call.
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

/** A configured threshold as a percentage, without rounding: `80%`, `50%`, `62.5%`. */
function percent(fraction: number): string {
  return `${Number((fraction * 100).toPrecision(12))}%`;
}

/**
 * The rate `errors / attempts` as a percentage with one decimal (trailing
 * zeros dropped), or more decimals when one would print the same figure as
 * `threshold` while the rate differs from it: 0.801 → `80.1%`, 0.8004 with
 * threshold 0.8 → `80.04%`, 5/6 → `83.3%`, 0.5 → `50%`.
 */
export function exactPercent(errors: number, attempts: number, threshold: number): string {
  const rate = attempts === 0 ? 0 : errors / attempts;
  const limit = Number((threshold * 100).toPrecision(12));
  for (let d = 1; d <= 12; d++) {
    const shown = Number((rate * 100).toFixed(d));
    // a rate that differs from the threshold must not print as the threshold
    if (shown !== limit || Math.abs(rate - threshold) < 1e-12) return `${shown}%`;
  }
  return `${rate * 100}%`;
}

/**
 * The e-mail telling that endpoint `url` (`webhookId`) was suspended at `time`
 * by a breaker configured with `config` (durations as the user configured
 * them, i.e. before any time scaling). `consoleUrl`, when known, is the
 * console's address without its per-run token (the e-mail is stored in the
 * outbox; the token stays in the address `service emulator` printed).
 *
 * @example
 * ```ts
 * import { DEFAULT_BREAKER_CONFIG } from "../../webhooks/mod.ts";
 * const mail = suspensionMail(
 *   { url: "https://example.com/hook", webhookId: "w1", time: 0 },
 *   { reason: "immediate", errorRate: 5 / 6, errors: 5, attempts: 6 },
 *   DEFAULT_BREAKER_CONFIG,
 * );
 * mail.body; // "... Reason: error rate above 80% (5 of 6 attempts in the last hour failed, 83.3%). ..."
 * ```
 */
export function suspensionMail(
  endpoint: { url: string; webhookId: string; time: number; consoleUrl?: string },
  s: Suspension,
  config: BreakerConfig,
): SuspensionMail {
  const { url, webhookId, time, consoleUrl } = endpoint;
  const rule = s.reason === "immediate"
    ? `error rate above ${percent(config.immediateAbove)}`
    : `error rate at or above ${percent(config.sustainedFrom)} for ${
      spokenDuration(config.sustainedForMs)
    }`;
  const threshold = s.reason === "immediate" ? config.immediateAbove : config.sustainedFrom;
  const pct = exactPercent(s.errors, s.attempts, threshold);
  const window = spokenDuration(config.windowMs); // "the last hour", "the last 30 minutes"
  const lastSpan = `the last ${window.startsWith("1 ") ? window.slice(2) : window}`;
  const inConsole = consoleUrl
    ? `the Reactivate button of the console (${consoleUrl}, opened from the consoleUrl that \`service emulator\` printed at start)`
    : "the Reactivate button of the emulator's console";
  return {
    subject: `Webhook endpoint suspended: ${url}`,
    body: [
      `Your webhook endpoint ${url} (id ${webhookId}) was suspended at ${
        new Date(time).toISOString()
      }.`,
      `Reason: ${rule} ` +
      `(${s.errors} of ${s.attempts} attempts in ${lastSpan} failed, ${pct}).`,
      `No notifications are sent to it while it is suspended; they wait ON_HOLD.`,
      `Reactivate it (at once, no cooldown) with \`service webhooks enable --webhookId ${webhookId}\`, ` +
      `with ${inConsole}, or with PATCH /v1/webhooks/${webhookId} {"enabled": true}.`,
    ].join("\n"),
  };
}
