/**
 * What the window held when the replay suspended an endpoint: the attempts
 * inside (t - W, t] of the first policy, counted by outcome, for
 * `breaker explain`. It mirrors the breaker's window (emptied at a
 * suspension and at a re-enable, no attempt added while suspended), so
 * memory is one window per endpoint, as for the breaker itself.
 *
 * @module
 */

import type { LogRecord, SimulationEvent, SuspendedEvent } from "../webhooks/mod.ts";

/** One suspension with what made it. */
export interface Witnessed {
  /** The replay's event. */
  event: SuspendedEvent;
  /** Attempts of the window by outcome (`500`, `TIMED_OUT`, ...), most frequent first. */
  outcomes: [string, number][];
  /** The window's first attempt, epoch ms. */
  first: number;
  /** Distinct notifications in the window. */
  notifications: number;
  /** The attempt that tipped it: its notification and outcome. */
  last: { notificationId: string | undefined; outcome: string };
}

interface Entry {
  time: number;
  outcome: string;
  notificationId: string | undefined;
}

interface Track {
  entries: Entry[];
  head: number;
  suspended: boolean;
  /** The last attempt's duration (ms), when the log gives it. */
  lastDuration: number | undefined;
  /** When the platform knew the outcome that suspended it: the tipping attempt's sentTime + duration (NaN: no duration). */
  decidedAt: number;
}

/** Attempts of one endpoint counted while it was suspended: how many, the first one's time and line. */
export interface Counted {
  /** How many. */
  count: number;
  /** The first one's sentTime, epoch ms. */
  first: number;
  /** The first one's line. */
  line: number;
  /** When the suspension's deciding outcome came in (sentTime + duration of the attempt that tipped it; NaN: unknown). */
  decidedAt: number;
}

/** The most suspensions kept per run (the first ones). */
const KEEP = 10;

/** The most suppressed attempts whose times are kept per endpoint. */
const KEEP_SUPPRESSED = 10_000;

/** See the module doc. */
export class WindowWitness {
  readonly #windowMs: number;
  readonly #tracks = new Map<string, Track>();
  /** Suspensions of the first policy, the first {@linkcode KEEP}. */
  readonly suspensions: Witnessed[] = [];
  /**
   * Attempts sent after the first policy suspended their endpoint, per
   * endpoint, but before the outcome that suspended it came in (the
   * attempt's sentTime plus its duration): already in flight when the
   * platform decided, as a platform that delivers several at once sends them.
   */
  readonly inFlight = new Map<string, Counted>();
  /** Attempts sent later while the first policy had their endpoint suspended, per endpoint. */
  readonly suppressed = new Map<string, Counted>();
  /**
   * The first {@linkcode KEEP_SUPPRESSED} of those, per endpoint, as
   * [sentTime, line]: to tell those sent before the platform recorded its
   * suspension (it decides when outcomes come in, in their order).
   */
  readonly suppressedTimes = new Map<string, [number, number][]>();

  /** `windowMs`: the first policy's window. */
  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /** Call with each record just before the replay takes it. */
  before(r: LogRecord): void {
    if (r.kind !== "attempt") return;
    let t = this.#tracks.get(r.webhookId);
    if (t === undefined) {
      t = { entries: [], head: 0, suspended: false, lastDuration: undefined, decidedAt: NaN };
      this.#tracks.set(r.webhookId, t);
    }
    if (t.suspended) {
      const into = r.time <= t.decidedAt ? this.inFlight : this.suppressed;
      if (into === this.suppressed) {
        let kept = this.suppressedTimes.get(r.webhookId);
        if (kept === undefined) this.suppressedTimes.set(r.webhookId, kept = []);
        if (kept.length < KEEP_SUPPRESSED) kept.push([r.time, r.line]);
      }
      const s = into.get(r.webhookId);
      if (s === undefined) {
        into.set(r.webhookId, { count: 1, first: r.time, line: r.line, decidedAt: t.decidedAt });
      } else s.count++;
      return;
    }
    t.lastDuration = r.duration;
    t.entries.push({
      time: r.time,
      outcome: r.responseCode !== undefined ? String(r.responseCode) : String(r.failureReason),
      notificationId: r.notificationId,
    });
    const cut = r.time - this.#windowMs;
    while (t.head < t.entries.length && t.entries[t.head].time <= cut) t.head++;
    if (t.head > 1024 && t.head * 2 > t.entries.length) {
      t.entries = t.entries.slice(t.head);
      t.head = 0;
    }
  }

  /** The replay's `onEvent`. */
  onEvent(policy: number, e: SimulationEvent): void {
    if (policy !== 0) return;
    const t = this.#tracks.get(e.webhookId);
    if (t === undefined) return;
    if (e.type === "suspended") {
      if (this.suspensions.length < KEEP) {
        const inside = t.entries.slice(t.head);
        const counts = new Map<string, number>();
        const ids = new Set<string | undefined>();
        for (const x of inside) {
          counts.set(x.outcome, (counts.get(x.outcome) ?? 0) + 1);
          ids.add(x.notificationId);
        }
        const last = inside[inside.length - 1];
        this.suspensions.push({
          event: e,
          outcomes: [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
          first: inside[0]?.time ?? e.time,
          notifications: ids.size,
          last: { notificationId: last?.notificationId, outcome: last?.outcome ?? "?" },
        });
      }
      t.suspended = true;
      t.decidedAt = e.time + (t.lastDuration ?? NaN);
    } else {
      t.suspended = false;
    }
    t.entries = [];
    t.head = 0;
  }
}
