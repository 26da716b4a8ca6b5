/**
 * breaker.md §3 written out as plainly as possible, as an independent oracle
 * for the tests: the pure breaker of `lib/webhooks` is checked against it on
 * random logs, and the live emulator's suspensions are checked against it on
 * the attempt log the emulator recorded. It imports nothing from `lib/`, so a
 * mistake shared by the code and its test cannot hide here.
 *
 * Deliberate simplicity: a plain array for the window, filtered on every
 * attempt; rates compared exactly by cross-multiplying with the thresholds
 * written as decimal fractions (0.8 = 8/10). `--band-resets-after-idle` is
 * not modelled (the default is off).
 *
 * @module
 */

/** One input line: an attempt (error or not, as §1's table says) or a re-enable. */
export type ReferenceEvent =
  | { type: "attempt"; time: number; error: boolean }
  | { type: "enable"; time: number };

/** The parameters of §3, in milliseconds and plain rates. */
export interface ReferenceConfig {
  /** Window W. */
  windowMs: number;
  /** Suspend at once when the rate is above this. */
  immediateAbove: number;
  /** The band begins at this rate (inclusive). */
  sustainedFrom: number;
  /** Suspend when the band has been held this long. */
  sustainedForMs: number;
  /** Fewer attempts in the window: no evaluation. */
  minAttempts: number;
  /** Must be null (or absent): the idle reset is not modelled. */
  bandResetsAfterIdleMs?: number | null;
}

/** §3's default parameters, literally. */
export const REFERENCE_DEFAULTS: ReferenceConfig = {
  windowMs: 60 * 60_000,
  immediateAbove: 0.8,
  sustainedFrom: 0.5,
  sustainedForMs: 4 * 60 * 60_000,
  minAttempts: 1,
  bandResetsAfterIdleMs: null,
};

/** `x` as numerator/denominator with a power-of-ten denominator (x has at most 9 decimals). */
function decimalFraction(x: number): [number, number] {
  for (let d = 1; d <= 1e9; d *= 10) {
    const n = Math.round(x * d);
    if (Math.abs(n / d - x) < 1e-12) return [n, d];
  }
  throw new RangeError(`${x} has more than 9 decimals`);
}

/**
 * What the breaker does at each event, as a string (or null when nothing
 * visible happens): `immediate@T:E/N`, `sustained@T:E/N:BANDSINCE`,
 * `suppressed@T`, `enabled@T`.
 *
 * @example
 * ```ts
 * referenceBreaker([{ type: "attempt", time: 0, error: true }], REFERENCE_DEFAULTS);
 * // ["immediate@0:1/1"]
 * ```
 */
export function referenceBreaker(
  events: ReferenceEvent[],
  cfg: ReferenceConfig,
): (string | null)[] {
  if (cfg.bandResetsAfterIdleMs != null) {
    throw new RangeError("the reference breaker does not model --band-resets-after-idle");
  }
  const [immN, immD] = decimalFraction(cfg.immediateAbove);
  const [floorN, floorD] = decimalFraction(cfg.sustainedFrom);
  let status = "ENABLED";
  let window: { t: number; e: boolean }[] = [];
  let bandSince: number | null = null;
  const out: (string | null)[] = [];
  for (const ev of events) {
    if (ev.type === "enable") {
      if (status === "SUSPENDED") {
        status = "ENABLED";
        window = [];
        bandSince = null;
        out.push(`enabled@${ev.time}`);
      } else out.push(null);
      continue;
    }
    if (status === "SUSPENDED") {
      out.push(`suppressed@${ev.time}`);
      continue;
    }
    window.push({ t: ev.time, e: ev.error });
    window = window.filter((a) => a.t > ev.time - cfg.windowMs);
    if (window.length < cfg.minAttempts) {
      out.push(null);
      continue;
    }
    const errors = window.filter((a) => a.e).length;
    const n = window.length;
    // errors/n > immN/immD  <=>  errors*immD > immN*n (all integers: exact)
    if (errors * immD > immN * n) {
      out.push(`immediate@${ev.time}:${errors}/${n}`);
      status = "SUSPENDED";
      window = [];
      bandSince = null;
    } else if (errors * floorD >= floorN * n) {
      if (bandSince === null) bandSince = ev.time;
      if (ev.time - bandSince >= cfg.sustainedForMs) {
        out.push(`sustained@${ev.time}:${errors}/${n}:${bandSince}`);
        status = "SUSPENDED";
        window = [];
        bandSince = null;
      } else out.push(null);
    } else {
      bandSince = null;
      out.push(null);
    }
  }
  return out;
}

/**
 * §1's "error for the breaker?" column: every outcome but a 2xx is an error.
 *
 * @example
 * ```ts
 * referenceIsError({ responseCode: 404 }); // true
 * referenceIsError({ failureReason: "TIMED_OUT" }); // true
 * ```
 */
export function referenceIsError(a: { responseCode?: number; failureReason?: string }): boolean {
  return a.responseCode === undefined || a.responseCode < 200 || a.responseCode > 299;
}
