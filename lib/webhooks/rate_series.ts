/**
 * A bounded, downsampled time series of one endpoint's windowed error rate,
 * for `breaker simulate --plot`: a fixed number of buckets whose width
 * doubles (merging neighbours) whenever the data outgrows them, so a
 * 5-million-line log still gives a small picture.
 *
 * @module
 */

/** Bucket flags. */
export const HAS_RATE = 1;
/** At least one evaluation in the bucket was in the sustained band. */
export const IN_BAND = 2;

/** Number of buckets kept (even: they halve by merging pairs). */
const CAPACITY = 512;

/**
 * Min/max error rate and flags per time bucket.
 *
 * @example
 * ```ts
 * const s = new RateSeries();
 * s.add(0, 0.5, true);
 * s.buckets().length; // 1
 * ```
 */
export class RateSeries {
  /** Start of bucket 0 (epoch ms), or null before the first point. */
  origin: number | null = null;
  /** Width of one bucket in ms: a minute at first. */
  width = 60_000;
  #min = new Float64Array(CAPACITY);
  #max = new Float64Array(CAPACITY);
  #flags = new Uint8Array(CAPACITY);
  #used = 0;

  /** Adds a point: the rate at `t` (NaN: no rate, e.g. a suppressed attempt). */
  add(t: number, rate: number, band: boolean): void {
    if (this.origin === null) this.origin = t;
    let i = Math.floor((t - this.origin) / this.width);
    if (i < 0) i = 0; // out of order input is rejected earlier; be safe
    while (i >= CAPACITY) {
      this.#halve();
      i = Math.floor((t - this.origin) / this.width);
    }
    const f = this.#flags[i];
    const hasRate = !Number.isNaN(rate);
    if (hasRate) {
      this.#min[i] = f & HAS_RATE ? Math.min(this.#min[i], rate) : rate;
      this.#max[i] = f & HAS_RATE ? Math.max(this.#max[i], rate) : rate;
    }
    this.#flags[i] = f | (hasRate ? HAS_RATE : 0) | (band ? IN_BAND : 0);
    if (i + 1 > this.#used) this.#used = i + 1;
  }

  #halve(): void {
    const n = CAPACITY / 2;
    for (let j = 0; j < n; j++) {
      const a = 2 * j;
      const b = a + 1;
      const fa = this.#flags[a];
      const fb = this.#flags[b];
      // a bucket without a rate holds min = max = 0: the other one's, or 0 when neither has one
      const merge = (v: Float64Array, join: (x: number, y: number) => number) =>
        !(fb & HAS_RATE) ? v[a] : !(fa & HAS_RATE) ? v[b] : join(v[a], v[b]);
      this.#min[j] = merge(this.#min, Math.min);
      this.#max[j] = merge(this.#max, Math.max);
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
