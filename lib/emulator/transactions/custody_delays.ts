/**
 * Custody delays: the emulator taking as long as a real custody platform.
 * An approval policy keeps a transaction in PENDING_AUTHORIZATION for
 * minutes; MPC signing keeps it in PENDING_SIGNATURE for seconds to a minute.
 * With `approvalDelay` every new transaction waits in PENDING_AUTHORIZATION
 * and then goes on as an admin approval makes it; with `signingDelay` it
 * waits in PENDING_SIGNATURE before it is signed. Each is one duration or a
 * range from which each transaction draws a uniform value.
 *
 * The engine (`engine.ts`) asks this file, at each stage, whether the stage
 * is over ({@linkcode CustodyDelays.approvalOver},
 * {@linkcode CustodyDelays.signingOver}); when not, a timer wakes the
 * engine at its end. Every delay drawn is recorded (the `transaction_delays`
 * table, one row per transaction and stage) with the time its stage ends (the time the transaction entered the stage, its
 * `lastUpdated`, plus the delay), so a restart with `--state` waits only what
 * remained, and a transaction in PENDING_AUTHORIZATION without a recorded
 * delay is one held by a `hold` fault, which waits for the admin endpoint.
 * A status change away from the stage (an approval, a cancel, a forced
 * status) clears its timer ({@linkcode CustodyDelays.moved}); stopping
 * clears them all.
 *
 * @module
 */

import { EmulatorConfigError } from "../errors.ts";
import { isFinalTransactionStatus } from "../../core/mod.ts";
import type { StatementSync } from "node:sqlite";
import type { Row, Store } from "../store.ts";
import { type EmulatorTransactionStatus, HELD_STATUS } from "./status.ts";

/** A custody delay: from `minMs` to `maxMs` milliseconds (equal for a fixed one). */
export interface DelayRange {
  /** The shortest delay, ms. */
  minMs: number;
  /** The longest delay, ms (`>= minMs`). */
  maxMs: number;
}

/** A custody delay as an option: milliseconds, or a {@linkcode DelayRange} to draw from. */
export type DelayOption = number | DelayRange;

/** The longest custody delay accepted: 24 hours. */
export const MAX_CUSTODY_DELAY_MS = 24 * 3_600_000;

/**
 * Checks a delay option and returns it as a range, or `undefined` when there
 * is no delay (absent or 0). Throws an {@linkcode EmulatorConfigError} (an
 * option that cannot work: exit 2 in the CLI) naming `--<name>` for a value
 * that is not from 0 to 24 hours or a range whose minimum is above its maximum.
 *
 * @example
 * ```ts
 * delayRange("approvalDelay", 120_000); // { minMs: 120000, maxMs: 120000 }
 * delayRange("signingDelay", { minMs: 5000, maxMs: 20000 });
 * delayRange("signingDelay", 0); // undefined
 * ```
 */
export function delayRange(name: string, value: DelayOption | undefined): DelayRange | undefined {
  if (value === undefined) return undefined;
  const r = typeof value === "number" ? { minMs: value, maxMs: value } : value;
  const ok = (ms: unknown) =>
    typeof ms === "number" && Number.isFinite(ms) && ms >= 0 && ms <= MAX_CUSTODY_DELAY_MS;
  if (!r || !ok(r.minMs) || !ok(r.maxMs)) {
    throw new EmulatorConfigError(
      `Invalid --${name}: expected milliseconds from 0 to ${MAX_CUSTODY_DELAY_MS} (24h), or {minMs, maxMs} within that.`,
    );
  }
  if (r.minMs > r.maxMs) {
    throw new EmulatorConfigError(
      `Invalid --${name}: expected minMs at most maxMs, got ${r.minMs} and ${r.maxMs}.`,
    );
  }
  return r.maxMs === 0 ? undefined : { minMs: r.minMs, maxMs: r.maxMs };
}

/**
 * A delay drawn uniformly from `range`, in whole milliseconds, with
 * `random()` in [0, 1).
 *
 * @example
 * ```ts
 * drawDelay({ minMs: 5000, maxMs: 20000 }, () => 0.5); // 12500
 * ```
 */
export function drawDelay(range: DelayRange, random: () => number = Math.random): number {
  const ms = Math.ceil(range.minMs + random() * (range.maxMs - range.minMs));
  return Math.min(Math.max(ms, Math.ceil(range.minMs)), Math.ceil(range.maxMs));
}

/** A stage of a transaction that a custody delay can make last. */
type DelayStage = "approval" | "signing";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS transaction_delays (
  id TEXT NOT NULL,
  stage TEXT NOT NULL,
  delay_ms INTEGER NOT NULL,
  due_at INTEGER NOT NULL,
  PRIMARY KEY (id, stage)
);
`;

/** The status a transaction waits in during each stage. */
const STAGE_STATUS: Record<DelayStage, EmulatorTransactionStatus> = {
  approval: HELD_STATUS,
  signing: "PENDING_SIGNATURE",
};

/** What {@linkcode CustodyDelays} needs. */
export interface CustodyDelaysOptions {
  /** The store the delays are recorded in. */
  store: Store;
  /** Clock, ms. */
  now: () => number;
  /** A log line. */
  log: (line: string) => void;
  /** The approval delay; default none. */
  approval?: DelayRange;
  /** The signing delay; default none. */
  signing?: DelayRange;
}

/**
 * The custody delays of one engine: what is recorded and the timers running.
 *
 * @example
 * ```ts
 * import type { Store } from "../store.ts";
 * declare const store: Store, id: string, lastUpdated: number;
 * declare const engine: { wake(id: string): void }; // schedules the transaction's next step
 * const log = (line: string) => console.error(line);
 * const delays = new CustodyDelays({ store, now: Date.now, log, approval: { minMs: 200, maxMs: 200 } });
 * function step(): void {
 *   if (delays.approves) delays.startApproval(id, lastUpdated);
 *   if (!delays.approvalOver(id, () => engine.wake(id))) return; // a timer wakes it
 *   // ... the approval is over: sign
 * }
 * ```
 */
export class CustodyDelays {
  readonly #o: CustodyDelaysOptions;
  readonly #sql: Record<"put" | "dueAt" | "remove", StatementSync>;
  readonly #timers = new Map<string, { stage: DelayStage; timer: ReturnType<typeof setTimeout> }>();
  #stopped = false;

  /** Delays over `o.store` (creates the table when missing). */
  constructor(o: CustodyDelaysOptions) {
    this.#o = o;
    const db = o.store.db;
    db.exec(SCHEMA);
    this.#sql = {
      put: db.prepare(
        "INSERT OR REPLACE INTO transaction_delays (id, stage, delay_ms, due_at) VALUES (?, ?, ?, ?)",
      ),
      dueAt: db.prepare("SELECT due_at FROM transaction_delays WHERE id = ? AND stage = ?"),
      remove: db.prepare("DELETE FROM transaction_delays WHERE id = ?"),
    };
  }

  /** Whether new transactions wait out an approval delay. */
  get approves(): boolean {
    return this.#o.approval !== undefined;
  }

  /**
   * Draws and records the approval delay of `id`, which entered
   * PENDING_AUTHORIZATION at `since` (epoch ms). Nothing without an approval delay.
   */
  startApproval(id: string, since: number): void {
    if (this.#o.approval) this.#record(id, "approval", this.#o.approval, since);
  }

  /**
   * Whether `id`, in PENDING_AUTHORIZATION, may go on: true once its
   * recorded approval delay has run out; false while it runs (a timer calls
   * `wake` at its end) or when none is recorded (held by a `hold` fault until
   * the admin endpoint approves it).
   */
  approvalOver(id: string, wake: () => void): boolean {
    const dueAt = this.#dueAt(id, "approval");
    return dueAt !== undefined && this.#over(id, "approval", dueAt, wake);
  }

  /**
   * Whether `id`, in PENDING_SIGNATURE since `since` (epoch ms), may be
   * signed: true without a signing delay or once it ran out; false while it
   * runs (a timer calls `wake` at its end). The delay is drawn and recorded
   * on the first ask.
   */
  signingOver(id: string, since: number, wake: () => void): boolean {
    let dueAt = this.#dueAt(id, "signing");
    if (dueAt === undefined) {
      if (!this.#o.signing) return true;
      dueAt = this.#record(id, "signing", this.#o.signing, since);
    }
    return this.#over(id, "signing", dueAt, wake);
  }

  /**
   * Tells the delays that `id` moved to `status`: the timer of a stage it
   * left is cleared, and an ended transaction's records are forgotten.
   */
  moved(id: string, status: EmulatorTransactionStatus): void {
    const t = this.#timers.get(id);
    if (t && STAGE_STATUS[t.stage] !== status) this.#clear(id);
    if (isFinalTransactionStatus(status)) this.#sql.remove.run(id);
  }

  /** Clears every timer (the records stay: a restart resumes them). */
  stop(): void {
    this.#stopped = true;
    for (const id of [...this.#timers.keys()]) this.#clear(id);
  }

  /** When the recorded delay of `stage` of `id` ends (epoch ms), `undefined` when none is. */
  #dueAt(id: string, stage: DelayStage): number | undefined {
    const r = this.#sql.dueAt.get(id, stage) as Row | undefined;
    return r ? Number(r.due_at) : undefined;
  }

  /** Draws and records the delay of `stage` of `id`, in it since `since`; returns when it ends. */
  #record(id: string, stage: DelayStage, range: DelayRange, since: number): number {
    const delayMs = drawDelay(range);
    this.#sql.put.run(id, stage, delayMs, since + delayMs);
    this.#o.log(
      `transaction ${id} waits ${delayMs} ms in ${STAGE_STATUS[stage]} (${stage} delay)`,
    );
    return since + delayMs;
  }

  #over(id: string, stage: DelayStage, dueAt: number, wake: () => void): boolean {
    const left = dueAt - this.#o.now();
    if (left <= 0) return true;
    if (this.#stopped) return false;
    this.#clear(id);
    // a timer may fire a little early by the wall clock: the woken engine asks again
    const timer = setTimeout(() => {
      this.#timers.delete(id);
      wake();
    }, left);
    this.#timers.set(id, { stage, timer });
    return false;
  }

  #clear(id: string): void {
    const t = this.#timers.get(id);
    if (t) clearTimeout(t.timer);
    this.#timers.delete(id);
  }
}
