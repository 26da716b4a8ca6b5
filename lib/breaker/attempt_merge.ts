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

import { MinHeap } from "../core/mod.ts";

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
  readonly #heap = new MinHeap<Entry<T>>((a, b) =>
    a.time < b.time || (a.time === b.time && a.seq < b.seq)
  );
  #seq = 0;
  #peak = 0;

  /** Attempts held now. */
  get size(): number {
    return this.#heap.size;
  }

  /** The most attempts held at once (for the memory figure). */
  get peak(): number {
    return this.#peak;
  }

  /** Takes one attempt in. */
  push(time: number, value: T): void {
    this.#heap.push({ time, seq: this.#seq++, value });
    if (this.#heap.size > this.#peak) this.#peak = this.#heap.size;
  }

  /** Lets out, in order, every attempt sent before `frontier` (epoch ms). */
  *release(frontier: number): Generator<T> {
    while (this.#heap.size > 0 && this.#heap.peek()!.time < frontier) yield this.#heap.pop()!.value;
  }

  /** Lets out everything left, in order. */
  *drain(): Generator<T> {
    while (this.#heap.size > 0) yield this.#heap.pop()!.value;
  }
}
