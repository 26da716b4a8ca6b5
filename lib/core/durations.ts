/**
 * Durations and points in time as the flags write them: `500ms`, `30s`,
 * `1h30m`, epoch milliseconds, ISO 8601, `24h` back from now; and the one
 * way they are printed back (`4h`), by the flags' help and the breaker's
 * texts, plot and records.
 *
 * @module
 */

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * Parses a duration: `500ms`, `30s`, `60m`, `4h`, `1d`, combinations such as
 * `1h30m`, or a plain number of milliseconds. Returns `undefined` when the
 * text is not a duration.
 *
 * @example
 * ```ts
 * parseDuration("4h"); // 14400000
 * ```
 */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(t)) return undefined;
  return [...t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)]
    .reduce((ms, m) => ms + Number(m[1]) * DURATION_UNITS[m[2]], 0);
}

/** A duration or a range of durations, in milliseconds: `{ minMs: 5000, maxMs: 20000 }` (equal for one value). */
export interface DurationRange {
  /** The shortest, ms. */
  minMs: number;
  /** The longest, ms (`>= minMs`). */
  maxMs: number;
}

/**
 * Parses a duration (`90s`, see {@linkcode parseDuration}) or a range
 * `MIN-MAX` of two (`5s-20s`). Returns `undefined` when the text is neither,
 * or when MIN is above MAX.
 *
 * @example
 * ```ts
 * parseDurationRange("5s-20s"); // { minMs: 5000, maxMs: 20000 }
 * parseDurationRange("2m"); // { minMs: 120000, maxMs: 120000 }
 * ```
 */
export function parseDurationRange(text: string): DurationRange | undefined {
  const parts = text.split("-");
  if (parts.length > 2) return undefined;
  const minMs = parseDuration(parts[0]);
  const maxMs = parts.length === 2 ? parseDuration(parts[1]) : minMs;
  if (minMs === undefined || maxMs === undefined || minMs > maxMs) return undefined;
  return { minMs, maxMs };
}

/**
 * Parses a point in time: epoch milliseconds, ISO 8601, or a duration back
 * from `now` (`24h`, `30d`). Returns `undefined` when it is none of these.
 *
 * @example
 * ```ts
 * parseTime("2026-01-01T00:00:00Z"); // 1767225600000
 * ```
 */
export function parseTime(text: string, now: () => number = Date.now): number | undefined {
  const t = text.trim();
  if (/^\d{10,}$/.test(t)) return Number(t);
  if (/^\d{4}-\d{2}-\d{2}/.test(t)) {
    const ms = Date.parse(t);
    return Number.isNaN(ms) ? undefined : ms;
  }
  if (/[a-z]$/.test(t)) {
    const d = parseDuration(t);
    if (d !== undefined) return now() - d;
  }
  return undefined;
}

/**
 * Formats milliseconds as the largest exact unit: `3600000` → `1h`, `1500` → `1500ms`.
 *
 * @example
 * ```ts
 * formatDuration(14_400_000); // "4h"
 * ```
 */
export function formatDuration(ms: number): string {
  for (const [unit, size] of Object.entries(DURATION_UNITS).reverse()) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
