/**
 * The replay behind `service breaker simulate` (`../shared/spec/breaker.md`
 * §3–§5): drives each endpoint's circuit breaker ({@linkcode step}: the
 * effect of `transition`, the entry point the emulator uses) and each notification's retry schedule (`afterAttempt`, through
 * {@linkcode NotificationTable}) with
 * the times of a delivery log — a virtual clock, no timers — under one
 * policy, or two at once for `--compare`.
 *
 * Memory grows with the number of endpoints and the attempts inside one
 * window, not with the log (plus one entry per notification with
 * `notifications` — per notification in progress with `onNotificationFinal`
 * — and a bounded, downsampled series per endpoint with `plot`).
 *
 * @module
 */

import { BadRequestError } from "../core/mod.ts";
import {
  type BreakerConfig,
  type BreakerEvent,
  type BreakerState,
  initialBreakerState,
  step,
  suppresses,
  type Suspension,
  validateBreakerConfig,
} from "./circuit_breaker.ts";
import { type AttemptOutcome, classifyOutcome, DEFAULT_RETRY_CONFIG } from "./retry_schedule.ts";
import { InvalidLineError } from "./log/delivery_log_error.ts";
import type { LogRecord } from "./log/log_record.ts";
import { RateSeries } from "./rate_series.ts";
import { NotificationTable, type OnFinal } from "./notification_table.ts";

/** A suspension found by the replay: the breaker's, with its endpoint and line. */
export interface SuspendedEvent extends Suspension {
  /** The endpoint. */
  webhookId: string;
  /** The input line of that attempt. */
  line: number;
}

/** A re-enable (control line) of a suspended endpoint. */
export interface EnabledEvent {
  /** Always `enabled`. */
  type: "enabled";
  /** The endpoint. */
  webhookId: string;
  /** Epoch ms of the control line. */
  time: number;
  /** The control line. */
  line: number;
}

/** What the replay reports in time order. */
export type SimulationEvent = SuspendedEvent | EnabledEvent;

/** One endpoint under one policy. */
export interface PolicyTrack {
  /** The breaker's state (updated in place as the log is replayed). */
  state: BreakerState;
  /** Suspensions of this endpoint. */
  suspensions: number;
  /** Attempts that would not have been made (the endpoint was suspended). */
  suppressed: number;
  /** The highest error rate seen at an evaluation (window at least `minAttempts`), or -1. */
  peakRate: number;
  /** When the peak was first reached. */
  peakAt: number | null;
  /** Window counts at the peak. */
  peakErrors: number;
  /** Window attempts at the peak. */
  peakAttempts: number;
  /** The longest time the error rate stayed in the band (t - bandSince at an evaluation), in ms. */
  longestBandMs: number;
  /** Time of each suspension and of its re-enable (null while still suspended). */
  suspendedPeriods: [number, number | null][];
}

/** One endpoint's figures (`attempts` and `lastTime` are filled in by {@linkcode Simulation.finish}). */
export interface EndpointReport {
  /** The endpoint. */
  webhookId: string;
  /** Attempt lines for it (suppressed ones included). */
  attempts: number;
  /** Its earliest time (epoch ms). */
  firstTime: number;
  /** Its latest time (epoch ms). */
  lastTime: number;
  /** One entry per policy, in the order given. */
  policies: PolicyTrack[];
  /** The downsampled error-rate series of the first policy, when plotting. */
  series: RateSeries | null;
}

/** Options of {@linkcode Simulation}. */
export interface SimulationOptions {
  /** One policy, or two to compare (the first is the reference). */
  policies: BreakerConfig[];
  /** Keep the per-notification projection (memory: one entry per notification). Default false. */
  notifications?: boolean;
  /**
   * With `notifications`: hand each notification that reaches COMPLETED or
   * FAILED here (with the line of that attempt) and forget it, so that the
   * result's table holds only those still in progress and memory stays flat.
   */
  onNotificationFinal?: OnFinal;
  /** Keep a downsampled error-rate series per endpoint for a plot. Default false. */
  plot?: boolean;
  /**
   * Called with each event as the replay makes it (before `feed` returns),
   * with the index of its policy: e.g. to note what the window held at a
   * suspension.
   */
  onEvent?: (policy: number, event: SimulationEvent) => void;
}

/** The totals of one policy. */
export interface PolicyTotals {
  /** The policy. */
  config: BreakerConfig;
  /** Suspensions under it, all endpoints. */
  suspensions: number;
  /** Attempts it suppressed, all endpoints. */
  suppressed: number;
  /** Its suspensions and re-enables, in time order (ties in input order). */
  events: SimulationEvent[];
}

/** What {@linkcode Simulation.finish} returns. */
export interface SimulationResult {
  /** Distinct endpoints seen. */
  webhooks: number;
  /** Attempt lines (suppressed ones included; control lines not). */
  attempts: number;
  /** Control lines. */
  enables: number;
  /** Earliest and latest time seen, or null for an empty log. */
  timeRange: [number, number] | null;
  /** One entry per policy, in the order given. */
  policies: PolicyTotals[];
  /** In first-seen order. */
  endpoints: EndpointReport[];
  /** In first-seen order (with `onNotificationFinal`: those still in progress); null unless asked for. */
  notifications: NotificationTable | null;
}

/**
 * A replay in progress: {@linkcode Simulation.feed} each record of the log,
 * then {@linkcode Simulation.finish}.
 *
 * @example
 * ```ts
 * import { DEFAULT_BREAKER_CONFIG } from "./circuit_breaker.ts";
 * const sim = new Simulation({ policies: [DEFAULT_BREAKER_CONFIG] });
 * sim.feed({ line: 1, webhookId: "w1", time: 0, kind: "attempt", responseCode: 500,
 *   failureReason: undefined, notificationId: undefined, duration: undefined });
 * sim.finish().policies[0].suspensions; // 1 (a 100% error rate)
 * ```
 */
export class Simulation {
  readonly #policies: BreakerConfig[];
  // endpoint number (first-seen order) by webhookId, and by the reader's webhookIndex (a hint)
  readonly #slots = new Map<string, number>();
  readonly #slotByIndex: number[] = [];
  // by endpoint number: what a record reads and writes, in arrays (one object per endpoint
  // cost a memory hop per field a record touched; the reports get their counts at finish)
  readonly #eps: EndpointReport[] = [];
  readonly #ids: string[] = [];
  readonly #firstStates: BreakerState[] = [];
  #lastTimes = new Float64Array(64);
  #lastLines = new Float64Array(64);
  #counts = new Float64Array(64);
  // by policy, then at 3n, 3n+1, 3n+2: the track's peakRate, longestBandMs and suppressed
  readonly #hot: Float64Array[];
  readonly #notifications: NotificationTable | null;
  readonly #events: SimulationEvent[][];
  readonly #plot: boolean;
  readonly #onEvent: ((policy: number, event: SimulationEvent) => void) | null;
  #attempts = 0;
  #enables = 0;
  #minTime = Infinity;
  #maxTime = -Infinity;
  // reused for every call to step (it keeps no reference to its event)
  readonly #attempt = { type: "attempt" as const, time: 0, error: false };

  /** Starts a replay; throws `BadRequestError` for an invalid policy. */
  constructor(options: SimulationOptions) {
    if (options.policies.length === 0) throw new BadRequestError("Give at least one policy.");
    for (const p of options.policies) validateBreakerConfig(p);
    this.#policies = options.policies;
    this.#notifications = options.notifications
      ? new NotificationTable(DEFAULT_RETRY_CONFIG, options.onNotificationFinal)
      : null;
    this.#events = options.policies.map(() => []);
    this.#hot = options.policies.map(() => new Float64Array(3 * 64));
    this.#plot = options.plot ?? false;
    this.#onEvent = options.onEvent ?? null;
  }

  /**
   * Replays one record. Records of one endpoint must come in non-decreasing
   * time: an earlier one throws {@linkcode InvalidLineError} (`out-of-order`)
   * naming both lines.
   */
  feed(r: LogRecord): void {
    const idx = r.webhookIndex ?? -1;
    let n = idx >= 0 ? this.#slotByIndex[idx] : undefined;
    // the reader's index is a hint: the id decides
    if (n === undefined || this.#ids[n] !== r.webhookId) n = this.#slot(r, idx);
    if (r.time < this.#lastTimes[n]) {
      throw new InvalidLineError(
        r.line,
        "sentTime",
        `time ${iso(r.time)} of webhook ${JSON.stringify(r.webhookId)} is earlier than line ${
          this.#lastLines[n]
        } (${
          iso(this.#lastTimes[n])
        }): each webhook's lines must be in time order; pass --sort to sort the log first`,
        "out-of-order",
      );
    }
    this.#lastTimes[n] = r.time;
    this.#lastLines[n] = r.line;
    const ep = this.#eps[n];
    if (r.time < this.#minTime) this.#minTime = r.time;
    if (r.time > this.#maxTime) this.#maxTime = r.time;
    const policies = this.#policies;
    if (r.kind === "enable") {
      this.#enables++;
      const ev: BreakerEvent = { type: "enable", time: r.time };
      for (let i = 0; i < policies.length; i++) {
        const track = ep.policies[i];
        const effect = step(track.state, ev, policies[i]);
        if (effect !== null && effect.type === "enabled") {
          const e: EnabledEvent = {
            type: "enabled",
            webhookId: ep.webhookId,
            time: r.time,
            line: r.line,
          };
          this.#events[i].push(e);
          this.#onEvent?.(i, e);
        }
      }
      return;
    }
    this.#attempts++;
    this.#counts[n]++;
    const outcome = r as unknown as AttemptOutcome;
    const error = classifyOutcome(outcome).error;
    const ev = this.#attempt;
    ev.time = r.time;
    ev.error = error;
    for (let i = 0; i < policies.length; i++) {
      const cfg = policies[i];
      const state = i === 0 ? this.#firstStates[n] : ep.policies[i].state;
      const hot = this.#hot[i];
      if (suppresses(state)) {
        hot[3 * n + 2]++;
        if (i === 0 && this.#plot) ep.series!.add(r.time, NaN, false);
        continue;
      }
      const effect = step(state, ev, cfg);
      let rate = -1;
      if (effect !== null && effect.type === "suspended") {
        rate = effect.errorRate;
        if (effect.bandSince !== undefined && r.time - effect.bandSince > hot[3 * n + 1]) {
          hot[3 * n + 1] = r.time - effect.bandSince;
        }
        this.#peak(i, n, rate, effect.errors, effect.attempts, r.time);
        const track = ep.policies[i];
        track.suspensions++;
        const e: SuspendedEvent = {
          type: "suspended",
          webhookId: ep.webhookId,
          time: r.time,
          reason: effect.reason,
          errorRate: effect.errorRate,
          attempts: effect.attempts,
          errors: effect.errors,
          line: r.line,
        };
        if (effect.bandSince !== undefined) e.bandSince = effect.bandSince;
        this.#events[i].push(e);
        this.#onEvent?.(i, e);
        if (i === 0 && this.#plot) {
          ep.series!.add(r.time, rate, effect.reason === "sustained");
        }
      } else if (state.attempts >= cfg.minAttempts) {
        rate = state.errors / state.attempts;
        const band = state.bandSince;
        if (band !== null && r.time - band > hot[3 * n + 1]) hot[3 * n + 1] = r.time - band;
        if (rate > hot[3 * n]) this.#peak(i, n, rate, state.errors, state.attempts, r.time);
        if (i === 0 && this.#plot) {
          ep.series!.add(r.time, rate, state.bandSince !== null);
        }
      }
      if (i === 0 && this.#notifications !== null && r.notificationId !== undefined) {
        this.#notifications.attempt(ep.webhookId, r.notificationId, outcome, r.time, r.line);
      }
    }
  }

  /** The number of `r`'s endpoint, made on its first record, noted for the reader's index `idx`. */
  #slot(r: LogRecord, idx: number): number {
    let n = this.#slots.get(r.webhookId);
    if (n === undefined) {
      n = this.#eps.length;
      const ep: EndpointReport = {
        webhookId: r.webhookId,
        attempts: 0,
        firstTime: r.time,
        lastTime: r.time,
        policies: this.#policies.map(() => ({
          state: initialBreakerState(),
          suspensions: 0,
          suppressed: 0,
          peakRate: -1,
          peakAt: null,
          peakErrors: 0,
          peakAttempts: 0,
          longestBandMs: 0,
          suspendedPeriods: [],
        })),
        series: this.#plot ? new RateSeries() : null,
      };
      this.#slots.set(r.webhookId, n);
      this.#eps.push(ep);
      this.#ids.push(r.webhookId);
      this.#firstStates.push(ep.policies[0].state);
      if (n === this.#counts.length) {
        this.#lastTimes = grown(this.#lastTimes);
        this.#lastLines = grown(this.#lastLines);
        this.#counts = grown(this.#counts);
        for (let i = 0; i < this.#hot.length; i++) this.#hot[i] = grown(this.#hot[i]);
      }
      this.#lastTimes[n] = r.time;
      for (const hot of this.#hot) hot[3 * n] = -1;
    }
    if (idx >= 0) this.#slotByIndex[idx] = n;
    return n;
  }

  /** Notes a new peak error rate of endpoint `n` under policy `i`. */
  #peak(i: number, n: number, rate: number, errors: number, attempts: number, t: number): void {
    if (rate <= this.#hot[i][3 * n]) return;
    this.#hot[i][3 * n] = rate;
    const track = this.#eps[n].policies[i];
    track.peakAt = t;
    track.peakErrors = errors;
    track.peakAttempts = attempts;
  }

  /** The results; call once, after the last record. */
  finish(): SimulationResult {
    const endpoints = this.#eps;
    for (let n = 0; n < endpoints.length; n++) {
      endpoints[n].attempts = this.#counts[n];
      endpoints[n].lastTime = this.#lastTimes[n];
      endpoints[n].policies.forEach((track, i) => {
        track.peakRate = this.#hot[i][3 * n];
        track.longestBandMs = this.#hot[i][3 * n + 1];
        track.suppressed = this.#hot[i][3 * n + 2];
      });
    }
    return {
      webhooks: endpoints.length,
      attempts: this.#attempts,
      enables: this.#enables,
      timeRange: endpoints.length ? [this.#minTime, this.#maxTime] : null,
      policies: this.#policies.map((config, i) => {
        // the tracks' suspended periods, from the events in input order (pushing times to
        // arrays while replaying changed their kind and recompiled the replay)
        for (const e of this.#events[i]) {
          const track = endpoints[this.#slots.get(e.webhookId)!].policies[i];
          if (e.type === "suspended") {
            track.suspendedPeriods.push([e.time, null]);
          } else {
            const period = track.suspendedPeriods[track.suspendedPeriods.length - 1];
            if (period !== undefined) period[1] = e.time;
          }
        }
        // stable: equal times keep their input order
        const events = this.#events[i].sort((a, b) => a.time - b.time);
        let suspensions = 0;
        let suppressed = 0;
        for (const ep of endpoints) {
          suspensions += ep.policies[i].suspensions;
          suppressed += ep.policies[i].suppressed;
        }
        return { config, suspensions, suppressed, events };
      }),
      endpoints,
      notifications: this.#notifications,
    };
  }
}

/** `a` in an array twice as long. */
function grown(a: Float64Array): Float64Array<ArrayBuffer> {
  const b = new Float64Array(a.length * 2);
  b.set(a);
  return b;
}

/** Epoch ms → ISO 8601 UTC with milliseconds. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
