/**
 * The one binary min-heap of `service`: the emulator's due-time queue
 * (`emulator/webhooks/scheduler.ts`) and `breaker`'s time-order merge of
 * attempts (`breaker/platform_log.ts`) both keep their entries in it.
 *
 * @module
 */

/**
 * A binary min-heap ordered by `less` (a strict "comes before"). Ties come
 * out in no stated order: put a sequence number in the order to make them
 * stable.
 *
 * @example
 * ```ts
 * const h = new MinHeap<number>((a, b) => a < b);
 * h.push(3);
 * h.push(1);
 * h.pop(); // 1
 * h.peek(); // 3
 * ```
 */
export class MinHeap<T> {
  readonly #less: (a: T, b: T) => boolean;
  readonly #h: T[] = [];

  /** `less(a, b)`: whether `a` comes out before `b`. */
  constructor(less: (a: T, b: T) => boolean) {
    this.#less = less;
  }

  /** Entries held. */
  get size(): number {
    return this.#h.length;
  }

  /** The first entry, left in; undefined when empty. */
  peek(): T | undefined {
    return this.#h[0];
  }

  /** Takes an entry in. */
  push(e: T): void {
    const h = this.#h;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.#less(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  /** Takes the first entry out; undefined when empty. */
  pop(): T | undefined {
    const h = this.#h;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.#less(h[l], h[m])) m = l;
        if (r < h.length && this.#less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }

  /** Every entry held, in no order (the heap is unchanged). */
  values(): IterableIterator<T> {
    return this.#h.values();
  }
}
