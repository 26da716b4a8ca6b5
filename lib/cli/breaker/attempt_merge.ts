/**
 * Puts attempts fetched notification by notification back into time order,
 * in bounded memory.
 *
 * The platform lists a webhook's notifications by creation time, and each
 * notification's attempts on their own; an attempt is never sent before its
 * notification was created, but its retries (and resends) come hours later,
 * interleaved with the attempts of newer notifications. So attempts are held
 * in a min-heap on (sentTime, arrival order) and an attempt is let out once
 * every notification not yet taken in was created after it: memory holds the
 * attempts still "in flight" at the frontier, not the window.
 *
 * @module
 */

/** One attempt waiting in the merge. */
export interface MergeItem<T> {
  /** Its sentTime, epoch ms. */
  time: number;
  /** What to hand out. */
  value: T;
}

interface Entry<T> {
  time: number;
  seq: number;
  value: T;
}

/**
 * A min-heap on (time, order of {@linkcode AttemptMerge.push}): equal times
 * come out in the order they went in.
 *
 * @example
 * ```ts
 * const m = new AttemptMerge<string>();
 * m.push(20, "b");
 * m.push(10, "a");
 * [...m.release(15)]; // ["a"]
 * [...m.drain()]; // ["b"]
 * ```
 */
export class AttemptMerge<T> {
  #heap: Entry<T>[] = [];
  #seq = 0;
  #peak = 0;

  /** Attempts held now. */
  get size(): number {
    return this.#heap.length;
  }

  /** The most attempts held at once (for the memory figure). */
  get peak(): number {
    return this.#peak;
  }

  /** Takes one attempt in. */
  push(time: number, value: T): void {
    const h = this.#heap;
    h.push({ time, seq: this.#seq++, value });
    if (h.length > this.#peak) this.#peak = h.length;
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  /** Lets out, in order, every attempt sent before `frontier` (epoch ms). */
  *release(frontier: number): Generator<T> {
    while (this.#heap.length > 0 && this.#heap[0].time < frontier) yield this.#pop();
  }

  /** Lets out everything left, in order. */
  *drain(): Generator<T> {
    while (this.#heap.length > 0) yield this.#pop();
  }

  #pop(): T {
    const h = this.#heap;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && less(h[l], h[m])) m = l;
        if (r < h.length && less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top.value;
  }
}

function less<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}
