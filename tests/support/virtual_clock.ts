/**
 * A virtual clock for tests: time moves only when the test says so, and the
 * timers set on it run in due order as it moves. It implements the webhook
 * engine's `Clock` seam, so retries and the breaker run on virtual time
 * without sleeping.
 *
 * @module
 */

import type { Clock, TimerHandle } from "../../lib/emulator/webhooks/scheduler.ts";

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/** A clock whose time moves only through {@linkcode VirtualClock.advanceTo}. */
export class VirtualClock implements Clock {
  #now: number;
  #timers: Timer[] = [];
  #nextId = 1;

  /** Starts at `start` (epoch ms). */
  constructor(start: number) {
    this.#now = start;
  }

  /** The virtual time. */
  now(): number {
    return this.#now;
  }

  /** Runs `fn` when the clock reaches now + `ms`. */
  setTimer(fn: () => void, ms: number): TimerHandle {
    const id = this.#nextId++;
    this.#timers.push({ id, at: this.#now + Math.max(0, ms), fn });
    return id;
  }

  /** Cancels a timer. */
  clearTimer(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle);
  }

  /** When the next timer is due, or undefined when none is set. */
  nextDue(): number | undefined {
    return this.#timers.reduce<number | undefined>(
      (m, t) => m === undefined || t.at < m ? t.at : m,
      undefined,
    );
  }

  /**
   * Moves to time `t`, running every timer due on the way in due order (ties
   * in the order they were set) and awaiting `settle()` after each, so that
   * the work a timer starts is done before time moves on.
   */
  async advanceTo(t: number, settle: () => Promise<void>): Promise<void> {
    for (;;) {
      let next: Timer | undefined;
      for (const x of this.#timers) {
        if (x.at <= t && (!next || x.at < next.at || (x.at === next.at && x.id < next.id))) {
          next = x;
        }
      }
      if (!next) break;
      this.#timers = this.#timers.filter((x) => x !== next);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
      await settle();
    }
    this.#now = Math.max(this.#now, t);
  }

  /** Runs timers until none is left (or time passes `limit`). */
  async runUntilIdle(settle: () => Promise<void>, limit = Infinity): Promise<void> {
    await settle();
    for (let due = this.nextDue(); due !== undefined && due <= limit; due = this.nextDue()) {
      await this.advanceTo(due, settle);
    }
  }
}
