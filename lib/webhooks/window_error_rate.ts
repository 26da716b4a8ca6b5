/**
 * The error rate of an endpoint's window (breaker.md §3): the window ending
 * at time `end` is the half-open interval `(end - W, end]`, and its rate is
 * errors / attempts (0 for an empty window). The one definition: the
 * breaker drops attempts with {@linkcode outsideWindow} and reports its rate
 * with {@linkcode errorRate}; the platform's `LAST_ACTIVE_HOUR_ERROR_RATE`
 * metric and the emulator's console both count
 * {@linkcode lastActiveWindowErrors}, so they show the same rate.
 *
 * @module
 */

/** One attempt as the window counts it. */
export interface WindowAttempt {
  /** Its `sentTime`, epoch ms. */
  readonly time: number;
  /** Whether it counts as an error for the breaker (breaker.md §1). */
  readonly error: boolean;
}

/** A window's counts and rate. */
export interface WindowErrors {
  /** Attempts in the window. */
  attempts: number;
  /** Errors among them. */
  errors: number;
  /** errors / attempts, 0 when the window is empty. */
  rate: number;
}

/**
 * Whether an attempt at `time` has left the window that ends at `end`
 * (`time <= end - windowMs`).
 *
 * @example
 * ```ts
 * outsideWindow(0, 60_000, 60_000); // true: (0, 60000] does not hold 0
 * outsideWindow(1, 60_000, 60_000); // false
 * ```
 */
export function outsideWindow(time: number, end: number, windowMs: number): boolean {
  return time <= end - windowMs;
}

/**
 * errors / attempts, 0 when there is no attempt.
 *
 * @example
 * ```ts
 * errorRate(1, 4); // 0.25
 * errorRate(0, 0); // 0
 * ```
 */
export function errorRate(errors: number, attempts: number): number {
  return attempts === 0 ? 0 : errors / attempts;
}

/**
 * The counts of the window `(end - windowMs, end]` over `attempts` (in any
 * order; those outside the window are skipped).
 *
 * @example
 * ```ts
 * windowErrors([{ time: 1, error: true }, { time: 2, error: false }], 2, 10);
 * // { attempts: 2, errors: 1, rate: 0.5 }
 * ```
 */
export function windowErrors(
  attempts: Iterable<WindowAttempt>,
  end: number,
  windowMs: number,
): WindowErrors {
  let n = 0;
  let errors = 0;
  for (const a of attempts) {
    if (a.time > end || outsideWindow(a.time, end, windowMs)) continue;
    n++;
    if (a.error) errors++;
  }
  return { attempts: n, errors, rate: errorRate(errors, n) };
}

/**
 * The window of an endpoint's last active hour: the window that ends at its
 * latest attempt, whatever the time now (the platform's
 * `LAST_ACTIVE_HOUR_ERROR_RATE`). No attempt: an empty window.
 *
 * @example
 * ```ts
 * lastActiveWindowErrors([{ time: 0, error: true }, { time: 5_000, error: false }], 60_000);
 * // { attempts: 2, errors: 1, rate: 0.5 }, an hour later as now
 * ```
 */
export function lastActiveWindowErrors(
  attempts: readonly WindowAttempt[],
  windowMs: number,
): WindowErrors {
  let end = -Infinity;
  for (const a of attempts) if (a.time > end) end = a.time;
  return windowErrors(attempts, end, windowMs);
}
