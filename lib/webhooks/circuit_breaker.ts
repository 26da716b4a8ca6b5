/**
 * The circuit breaker of one webhook endpoint (`../shared/spec/breaker.md`
 * §3): a sliding window of attempt outcomes, an immediate threshold, a
 * sustained band, suspension and re-enable.
 *
 * {@linkcode transition} is the one entry point, used alike by
 * `breaker simulate` (a virtual clock from the log's times) and the
 * emulator (the real clock): a pure function of (state, event, config) — no
 * clock, no I/O, no module state — except that, for speed (a replay handles
 * millions of events), it updates the `state` object it is given **in
 * place** and returns that same object.
 *
 * Rates are compared exactly: each threshold is turned once into a fraction
 * of integers (`0.8` → 8/10) and compared by cross-multiplication, so 4
 * errors out of 5 is exactly 0.8 and not above it. The fractions of the
 * config a state last ran under are kept in that state (`cfg`, `immNum`,
 * ...), not in the module: a replay reads them where it reads the window. The window and its rate are `window_error_rate.ts`'s.
 *
 * @module
 */

import { BadRequestError } from "../core/mod.ts";
import { errorRate, outsideWindow } from "./window_error_rate.ts";

/** The breaker's parameters (breaker.md §3); durations in ms. */
export interface BreakerConfig {
  /** Window W: the window at time t is the half-open interval (t - W, t]. Default 60 minutes. */
  readonly windowMs: number;
  /** Suspend at once when the window's error rate is strictly above this. Default 0.8. */
  readonly immediateAbove: number;
  /** The band: an error rate at or above this (and not above `immediateAbove`). Default 0.5. */
  readonly sustainedFrom: number;
  /** Suspend when the rate has stayed in the band this long (t - bandSince >= S). Default 4 hours. */
  readonly sustainedForMs: number;
  /** Evaluate only when the window holds at least this many attempts. Default 1. */
  readonly minAttempts: number;
  /**
   * When set, an attempt that comes at least this long after the endpoint's
   * previous evaluated attempt unsets `bandSince` first. Default `null`:
   * `bandSince` survives quiet periods (our choice in breaker.md).
   */
  readonly bandResetsAfterIdleMs: number | null;
}

/** The defaults of breaker.md §3: 60 m, above 0.8, from 0.5 for 4 h, at least 1 attempt, band survives idle. */
export const DEFAULT_BREAKER_CONFIG: BreakerConfig = Object.freeze({
  windowMs: 60 * 60_000,
  immediateAbove: 0.8,
  sustainedFrom: 0.5,
  sustainedForMs: 4 * 3_600_000,
  minAttempts: 1,
  bandResetsAfterIdleMs: null,
});

/** An endpoint's breaker status. */
export type BreakerStatus = "ENABLED" | "SUSPENDED";

/**
 * The state of one endpoint's breaker. The window is a ring buffer of the
 * attempts inside (t - W, t], oldest first: attempt i (0..attempts-1) is at
 * slot k = (head + i) % capacity, its `sentTime` at `ring[2k]` and 1 (an
 * error) or 0 at `ring[2k + 1]` (one buffer: a replay touches one place per
 * attempt). Treat the ring as opaque outside this module; `attempts` and
 * `errors` count the window at the last attempt.
 */
export interface BreakerState {
  /** ENABLED, or SUSPENDED until an `enable` event. */
  status: BreakerStatus;
  /** Ring buffer of (sentTime, error) pairs; capacity `ring.length / 2`. */
  ring: Float64Array;
  /** Slot of the oldest attempt in the ring buffer. */
  head: number;
  /** Attempts in the window. */
  attempts: number;
  /** Errors in the window. */
  errors: number;
  /** When the rate entered the band [sustainedFrom, immediateAbove], or `null`. */
  bandSince: number | null;
  /**
   * `sentTime` of the last attempt evaluated while ENABLED (for
   * `bandResetsAfterIdleMs`), or NaN (none; `null` in a snapshot: a field
   * that is always a number is written in place, not allocated per attempt).
   */
  lastAttemptAt: number;
  /** The config this state last ran under, checked (a cache of the four fields below), or `null`. */
  cfg: BreakerConfig | null;
  /** `cfg.immediateAbove` as an exact fraction immNum / immDen. */
  immNum: number;
  /** See `immNum`. */
  immDen: number;
  /** `cfg.sustainedFrom` as an exact fraction floorNum / floorDen. */
  floorNum: number;
  /** See `floorNum`. */
  floorDen: number;
}

/** An input to the breaker: an attempt with its outcome, or the endpoint being re-enabled. */
export type BreakerEvent =
  | { type: "attempt"; time: number; error: boolean }
  | { type: "enable"; time: number };

/** A suspension, as a transition reports it. */
export interface Suspension {
  /** Always `suspended`. */
  type: "suspended";
  /** Epoch ms of the attempt whose evaluation suspended the endpoint. */
  time: number;
  /** `immediate` (above the threshold) or `sustained` (in the band long enough). */
  reason: "immediate" | "sustained";
  /** errors / attempts of the window at this evaluation. */
  errorRate: number;
  /** The window's attempts at this evaluation (before it was emptied). */
  attempts: number;
  /** The window's errors at this evaluation. */
  errors: number;
  /** Only for `sustained`: when the band began. */
  bandSince?: number;
}

/** What a transition did that is worth reporting (`null`: nothing). */
export type BreakerEffect =
  | Suspension
  | { type: "enabled"; time: number }
  /** An attempt while SUSPENDED: it would not have been made. */
  | { type: "suppressed"; time: number }
  | null;

const INITIAL_CAPACITY = 16;

/**
 * A fresh, ENABLED breaker with an empty window.
 *
 * @example
 * ```ts
 * const s = initialBreakerState(); // s.status === "ENABLED"
 * ```
 */
export function initialBreakerState(): BreakerState {
  return {
    status: "ENABLED",
    ring: new Float64Array(2 * INITIAL_CAPACITY),
    head: 0,
    attempts: 0,
    errors: 0,
    bandSince: null,
    lastAttemptAt: NaN,
    cfg: null,
    immNum: 0,
    immDen: 1,
    floorNum: 0,
    floorDen: 1,
  };
}

/** A JSON-friendly form of {@linkcode BreakerState}, e.g. for a state file. */
export interface BreakerSnapshot {
  /** ENABLED or SUSPENDED. */
  status: BreakerStatus;
  /** The window's attempts, oldest first, as `[sentTime, 1 if error else 0]`. */
  window: [number, 0 | 1][];
  /** When the band began, or `null`. */
  bandSince: number | null;
  /** The last evaluated attempt's time, or `null`. */
  lastAttemptAt: number | null;
}

/**
 * Rebuilds a state from a snapshot (the emulator keeps the window's attempts
 * in its store and restores each endpoint's breaker from them).
 *
 * @example
 * ```ts
 * const s = restoreBreakerState({ status: "ENABLED", window: [[0, 1]], bandSince: null, lastAttemptAt: 0 });
 * ```
 */
export function restoreBreakerState(snap: BreakerSnapshot): BreakerState {
  const s = initialBreakerState();
  s.status = snap.status;
  for (const [t, e] of snap.window) push(s, t, e === 1);
  s.bandSince = snap.bandSince;
  s.lastAttemptAt = snap.lastAttemptAt ?? NaN;
  return s;
}

/**
 * The exact decimal value of `x` as written by `String(x)` (the shortest
 * text that reads back as `x`), as a fraction [num, den]: 0.8 → 8/10, 1e-7 → 1/10^7.
 */
function fraction(x: number): [bigint, bigint] {
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  if (!m) throw new BadRequestError(`A threshold must be a finite number from 0 to 1, got ${x}.`);
  const frac = m[2] ?? "";
  let num = BigInt(m[1] + frac);
  let den = 10n ** BigInt(frac.length);
  const exp = Number(m[3] ?? 0);
  if (exp > 0) num *= 10n ** BigInt(exp);
  if (exp < 0) den *= 10n ** BigInt(-exp);
  return [num, den];
}

/**
 * errors/attempts compared with a threshold of `cfg` (`floor`: sustainedFrom, else
 * immediateAbove) whose {@linkcode fraction} is num/den as numbers: -1 below, 0 equal, 1
 * above. attempts > 0. (The threshold is not passed itself: a number argument costs an
 * allocation per call.)
 */
function compareRate(
  errors: number,
  attempts: number,
  num: number,
  den: number,
  cfg: BreakerConfig,
  floor: boolean,
): number {
  const l = errors * den;
  const r = num * attempts;
  if (l <= Number.MAX_SAFE_INTEGER && r <= Number.MAX_SAFE_INTEGER) {
    return l > r ? 1 : l < r ? -1 : 0;
  }
  // products beyond 2^53: exact in bigints (rare)
  const [bigNum, bigDen] = fraction(floor ? cfg.sustainedFrom : cfg.immediateAbove);
  const bl = BigInt(errors) * bigDen;
  const br = bigNum * BigInt(attempts);
  return bl > br ? 1 : bl < br ? -1 : 0;
}

/**
 * Checks a configuration; throws `BadRequestError` naming the bad parameter.
 *
 * @example
 * ```ts
 * validateBreakerConfig({ ...DEFAULT_BREAKER_CONFIG, minAttempts: 20 });
 * ```
 */
export function validateBreakerConfig(cfg: BreakerConfig): void {
  const pos = (name: string, v: number) => {
    if (!Number.isFinite(v) || v <= 0) {
      throw new BadRequestError(`${name} must be a positive number of ms, got ${v}.`);
    }
  };
  pos("windowMs", cfg.windowMs);
  if (!Number.isFinite(cfg.sustainedForMs) || cfg.sustainedForMs < 0) {
    throw new BadRequestError(`sustainedForMs must be 0 or more ms, got ${cfg.sustainedForMs}.`);
  }
  for (const k of ["immediateAbove", "sustainedFrom"] as const) {
    const v = cfg[k];
    if (!Number.isFinite(v) || v < 0 || v > 1) {
      throw new BadRequestError(`${k} must be a number from 0 to 1, got ${v}.`);
    }
  }
  if (!Number.isInteger(cfg.minAttempts) || cfg.minAttempts < 1) {
    throw new BadRequestError(
      `minAttempts must be a whole number of at least 1, got ${cfg.minAttempts}.`,
    );
  }
  if (cfg.bandResetsAfterIdleMs !== null) pos("bandResetsAfterIdleMs", cfg.bandResetsAfterIdleMs);
}

/** Checks `cfg` and keeps its thresholds as fractions in `s` (step calls it when `cfg` is not the config `s` last ran under). */
function useConfig(s: BreakerState, cfg: BreakerConfig): void {
  validateBreakerConfig(cfg);
  const [immNum, immDen] = fraction(cfg.immediateAbove);
  const [floorNum, floorDen] = fraction(cfg.sustainedFrom);
  s.immNum = Number(immNum);
  s.immDen = Number(immDen);
  s.floorNum = Number(floorNum);
  s.floorDen = Number(floorDen);
  s.cfg = cfg;
}

/** Appends an attempt to the ring buffer, growing it when full. */
function push(s: BreakerState, time: number, error: boolean): void {
  let ring = s.ring;
  let cap = ring.length >> 1;
  if (s.attempts === cap) {
    // oldest first from slot 0, in a buffer twice the size
    const grown = new Float64Array(ring.length * 2);
    grown.set(ring.subarray(2 * s.head));
    grown.set(ring.subarray(0, 2 * s.head), ring.length - 2 * s.head);
    s.ring = ring = grown;
    s.head = 0;
    cap *= 2;
  }
  // the capacity is a power of two; no branch that a replay takes late (an optimized replay
  // meeting code it never ran is compiled again)
  const j = (s.head + s.attempts) & (cap - 1);
  ring[2 * j] = time;
  ring[2 * j + 1] = error ? 1 : 0;
  s.attempts++;
  if (error) s.errors++;
}

/** Drops every attempt with sentTime <= t - W. */
function dropOld(s: BreakerState, now: number, windowMs: number): void {
  const ring = s.ring;
  const mask = (ring.length >> 1) - 1;
  let head = s.head;
  let attempts = s.attempts;
  while (attempts > 0 && outsideWindow(ring[2 * head], now, windowMs)) {
    s.errors -= ring[2 * head + 1] | 0; // 0 or 1, kept a small integer
    head = (head + 1) & mask;
    attempts--;
  }
  s.head = head;
  s.attempts = attempts;
}

function emptyWindow(s: BreakerState): void {
  s.head = 0;
  s.attempts = 0;
  s.errors = 0;
  if (s.ring.length > 2048) s.ring = new Float64Array(2 * INITIAL_CAPACITY); // give back what a burst took
}

/**
 * Applies one event to an endpoint's breaker (breaker.md §3) and says what
 * happened. **Updates `state` in place** and returns it as `state`.
 *
 * - `attempt` while ENABLED: adds it to the window, drops attempts with
 *   `sentTime <= t - W`; with fewer than `minAttempts` in the window nothing
 *   else changes; a rate above `immediateAbove` suspends (`immediate`); a
 *   rate at or above `sustainedFrom` starts or continues the band and
 *   suspends (`sustained`) once `t - bandSince >= sustainedForMs`; a lower
 *   rate unsets `bandSince`. A suspension empties the window and unsets
 *   `bandSince`.
 * - `attempt` while SUSPENDED: nothing changes; the effect is `suppressed`.
 * - `enable` while SUSPENDED: ENABLED with an empty window and no band;
 *   effect `enabled`. While ENABLED it changes nothing (effect `null`).
 *
 * Events of one endpoint must come in non-decreasing `time`; equal times are
 * evaluated in the order given.
 *
 * @example
 * ```ts
 * let s = initialBreakerState();
 * for (let i = 0; i < 4; i++) s = transition(s, { type: "attempt", time: i, error: true }).state;
 * // every attempt is an error: rate 1 > 0.8, so the first one already suspended it
 * s.status; // "SUSPENDED"
 * ```
 */
export function transition(
  state: BreakerState,
  event: BreakerEvent,
  cfg: BreakerConfig = DEFAULT_BREAKER_CONFIG,
): { state: BreakerState; effect: BreakerEffect } {
  return { state, effect: step(state, event, cfg) };
}

/** {@linkcode transition}'s effect alone (a replay of millions of events makes no pair per event). */
export function step(state: BreakerState, event: BreakerEvent, cfg: BreakerConfig): BreakerEffect {
  if (state.cfg !== cfg) useConfig(state, cfg);
  const t = event.time;
  if (event.type === "enable") {
    if (state.status === "ENABLED") return null;
    state.status = "ENABLED";
    emptyWindow(state);
    state.bandSince = null;
    state.lastAttemptAt = NaN;
    return { type: "enabled", time: t };
  }
  if (suppresses(state)) return { type: "suppressed", time: t };

  const idle = cfg.bandResetsAfterIdleMs;
  if (idle !== null && t - state.lastAttemptAt >= idle) { // false while NaN
    state.bandSince = null;
  }
  state.lastAttemptAt = t;
  push(state, t, event.error);
  dropOld(state, t, cfg.windowMs);
  const attempts = state.attempts;
  if (attempts < cfg.minAttempts) return null;
  const errors = state.errors;
  const immediate = compareRate(errors, attempts, state.immNum, state.immDen, cfg, false) > 0;
  if (!immediate) {
    if (compareRate(errors, attempts, state.floorNum, state.floorDen, cfg, true) < 0) {
      state.bandSince = null;
      return null;
    }
    if (state.bandSince === null) state.bandSince = t;
    if (t - state.bandSince < cfg.sustainedForMs) return null;
  }
  // one call for both reasons (the first sustained suspension comes late in a replay)
  return suspend(state, t, immediate ? "immediate" : "sustained", errors, attempts);
}

/** Whether an attempt now would be suppressed (`step` makes it no other change; a replay counts it without calling step). */
export function suppresses(state: BreakerState): boolean {
  return state.status === "SUSPENDED";
}

function suspend(
  s: BreakerState,
  t: number,
  reason: "immediate" | "sustained",
  errors: number,
  attempts: number,
): Suspension {
  const effect: Suspension = {
    type: "suspended",
    time: t,
    reason,
    errorRate: errorRate(errors, attempts),
    attempts,
    errors,
  };
  if (reason === "sustained") effect.bandSince = s.bandSince!;
  s.status = "SUSPENDED";
  emptyWindow(s);
  s.bandSince = null;
  return effect;
}
