/**
 * When each notification's next attempt is due: one timer over a min-heap of
 * due times (no polling), on an injectable {@linkcode Clock} so that tests
 * can drive retries and the breaker on virtual time.
 *
 * A notification is scheduled at most once at a time: scheduling it again
 * (a resend, a re-enable) makes its older entry stale, and cancelling it (the
 * endpoint was suspended, disabled or deleted) drops its mark. The
 * {@linkcode Scheduler} hands due entries to its owner, which queues them per
 * endpoint and {@linkcode Scheduler.take}s each one when it starts the attempt.
 *
 * @module
 */

import { MinHeap } from "../../core/min_heap.ts";

/** An opaque timer handle of a {@linkcode Clock}. */
export type TimerHandle = unknown;

/** Time and timers, injectable. */
export interface Clock {
  /** Epoch milliseconds now. */
  now(): number;
  /** Calls `fn` once, `ms` milliseconds from now. */
  setTimer(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer of {@linkcode Clock.setTimer}. */
  clearTimer(handle: TimerHandle): void;
}

/**
 * A clock on real timers, reading time from `now` (default `Date.now`).
 *
 * @example
 * ```ts
 * const clock = systemClock();
 * clock.setTimer(() => {}, 10);
 * ```
 */
export function systemClock(now: () => number = Date.now): Clock {
  return {
    now,
    setTimer: (fn, ms) => setTimeout(fn, ms),
    clearTimer: (h) => clearTimeout(h as number),
  };
}

/** A due notification: its row id and its endpoint. */
export interface DueEntry {
  /** The notification's row id. */
  seq: number;
  /** Its endpoint. */
  webhookId: string;
}

interface HeapEntry extends DueEntry {
  due: number;
  gen: number;
}

/**
 * The due-time queue; see the module doc.
 *
 * @example
 * ```ts
 * const s = new Scheduler(systemClock(), (due) => due.forEach((d) => s.take(d.seq)));
 * s.schedule(1, "w1", Date.now() + 1000);
 * s.stop();
 * ```
 */
export class Scheduler {
  readonly #clock: Clock;
  readonly #onDue: (due: DueEntry[]) => void;
  readonly #heap = new MinHeap<HeapEntry>(less);
  /** seq → generation of its one valid entry. */
  #scheduled = new Map<number, number>();
  #gen = 0;
  #timer: TimerHandle | undefined;
  #timerDue = Infinity;
  #stopped = false;

  /** `onDue` gets every entry whose time has come, in due order, once per timer. */
  constructor(clock: Clock, onDue: (due: DueEntry[]) => void) {
    this.#clock = clock;
    this.#onDue = onDue;
  }

  /** Makes `seq` due at `due` (epoch ms); an earlier schedule of it becomes stale. */
  schedule(seq: number, webhookId: string, due: number): void {
    if (this.#stopped) return;
    const gen = ++this.#gen;
    this.#scheduled.set(seq, gen);
    this.#heap.push({ due, seq, gen, webhookId });
    this.#arm();
  }

  /**
   * Consumes the mark of a due `seq` when its attempt starts: false when it
   * was cancelled meanwhile (do not attempt it).
   */
  take(seq: number): boolean {
    return this.#scheduled.delete(seq);
  }

  /** Forgets `seq`: a due or queued entry of it is not attempted. */
  cancel(seq: number): void {
    this.#scheduled.delete(seq);
  }

  /** Forgets every entry of an endpoint still waiting for its time. */
  cancelEndpoint(webhookId: string): void {
    for (const e of this.#heap.values()) {
      if (e.webhookId === webhookId) this.#scheduled.delete(e.seq);
    }
  }

  /** Stops the timer; nothing is handed out or scheduled afterwards. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    const top = this.#heap.peek();
    if (!top || this.#stopped) return;
    if (this.#timer !== undefined && this.#timerDue <= top.due) return;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timerDue = top.due;
    this.#timer = this.#clock.setTimer(
      () => this.#tick(),
      Math.max(0, top.due - this.#clock.now()),
    );
  }

  #tick(): void {
    this.#timer = undefined;
    this.#timerDue = Infinity;
    const now = this.#clock.now();
    const due: DueEntry[] = [];
    while (this.#heap.size > 0 && this.#heap.peek()!.due <= now) {
      const e = this.#heap.pop()!;
      if (this.#scheduled.get(e.seq) !== e.gen) continue; // stale
      due.push({ seq: e.seq, webhookId: e.webhookId });
    }
    if (due.length) this.#onDue(due);
    this.#arm();
  }
}

function less(a: HeapEntry, b: HeapEntry): boolean {
  return a.due < b.due || (a.due === b.due && a.gen < b.gen);
}
