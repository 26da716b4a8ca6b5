/**
 * mulberry32, a small seeded generator of numbers in [0, 1): the same
 * sequence for the same seed on every run (independent of Math.random), so
 * a generated input or a failure can be replayed. Used by the fuzz tests and
 * by `scripts/bench/breaker_simulate.ts` (the same log every run).
 *
 * @module
 */

/**
 * The generator for `seed`.
 *
 * @example
 * ```ts
 * const random = seededRandom(42);
 * random(); // the same first number on every run
 * ```
 */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
