/**
 * A bounded, downsampled time series of one endpoint's windowed error rate,
 * for `breaker simulate --plot`: a fixed number of buckets whose width
 * doubles (merging neighbours) whenever the data outgrows them, so a
 * 5-million-line log still gives a small picture.
 *
 * @module
 */
import { BadRequestError } from "../core/mod.ts";

/** Bucket flags. */
export const HAS_RATE = 1;
/** At least one evaluation in the bucket was in the sustained band. */
export const IN_BAND = 2;
/** At least one attempt in the bucket was suppressed (endpoint suspended). */
export const SUSPENDED = 4;

/**
 * Min/max error rate and flags per time bucket.
 *
 * @example
 * ```ts
 * const s = new RateSeries();
 * s.add(0, 0.5, true, false);
 * s.buckets().length; // 1
 * ```
 */
export class RateSeries {
  /** Number of buckets kept. */
  readonly capacity: number;
  /** Start of bucket 0 (epoch ms), or null before the first point. */
  origin: number | null = null;
  /** Width of one bucket in ms. */
  width: number;
  #min: Float64Array;
  #max: Float64Array;
  #flags: Uint8Array;
  #used = 0;

  /** `capacity` buckets (even), starting `initialWidthMs` wide. */
  constructor(capacity = 512, initialWidthMs = 60_000) {
    if (capacity < 2 || capacity % 2 !== 0) {
      throw new BadRequestError("capacity must be even, >= 2");
    }
    this.capacity = capacity;
    this.width = initialWidthMs;
    this.#min = new Float64Array(capacity);
    this.#max = new Float64Array(capacity);
    this.#flags = new Uint8Array(capacity);
  }

  /** Adds a point: the rate at `t` (NaN: no rate, e.g. a suppressed attempt). */
  add(t: number, rate: number, band: boolean, suspended: boolean): void {
    if (this.origin === null) this.origin = t;
    let i = Math.floor((t - this.origin) / this.width);
    if (i < 0) i = 0; // out of order input is rejected earlier; be safe
    while (i >= this.capacity) {
      this.#halve();
      i = Math.floor((t - this.origin) / this.width);
    }
    const f = this.#flags[i];
    if (!Number.isNaN(rate)) {
      if (f & HAS_RATE) {
        if (rate < this.#min[i]) this.#min[i] = rate;
        if (rate > this.#max[i]) this.#max[i] = rate;
      } else {
        this.#min[i] = rate;
        this.#max[i] = rate;
      }
      this.#flags[i] = f | HAS_RATE | (band ? IN_BAND : 0) | (suspended ? SUSPENDED : 0);
    } else {
      this.#flags[i] = f | (band ? IN_BAND : 0) | (suspended ? SUSPENDED : 0);
    }
    if (i + 1 > this.#used) this.#used = i + 1;
  }

  #halve(): void {
    const n = this.capacity / 2;
    for (let j = 0; j < n; j++) {
      const a = 2 * j;
      const b = a + 1;
      const fa = this.#flags[a];
      const fb = this.#flags[b];
      let min = 0;
      let max = 0;
      if ((fa & HAS_RATE) && (fb & HAS_RATE)) {
        min = Math.min(this.#min[a], this.#min[b]);
        max = Math.max(this.#max[a], this.#max[b]);
      } else if (fa & HAS_RATE) {
        min = this.#min[a];
        max = this.#max[a];
      } else if (fb & HAS_RATE) {
        min = this.#min[b];
        max = this.#max[b];
      }
      this.#min[j] = min;
      this.#max[j] = max;
      this.#flags[j] = fa | fb;
    }
    this.#min.fill(0, n);
    this.#max.fill(0, n);
    this.#flags.fill(0, n);
    this.width *= 2;
    this.#used = Math.ceil(this.#used / 2);
  }

  /** The used buckets: start time, end time, min, max rate, flags. */
  buckets(): { start: number; end: number; min: number; max: number; flags: number }[] {
    const out = [];
    if (this.origin === null) return [];
    for (let i = 0; i < this.#used; i++) {
      out.push({
        start: this.origin + i * this.width,
        end: this.origin + (i + 1) * this.width,
        min: this.#min[i],
        max: this.#max[i],
        flags: this.#flags[i],
      });
    }
    return out;
  }
}
