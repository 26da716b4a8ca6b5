/**
 * `breaker simulate --jobs N`: the log's webhooks split into N partitions
 * (a hash of the webhook id), each replayed by its own worker thread
 * ({@linkcode ./simulate_worker.ts}) that reads the whole file and keeps its
 * own webhooks (skipping the others' lines on their bytes, `line_claim.ts`); the partitions are independent because the breaker and
 * retry state is per webhook. The parts are merged into the result one
 * replay of the whole log gives: endpoints and notifications still in
 * progress in first-seen order (by line), events in time order with ties in
 * line order, and the same first error (the one at the earliest line).
 * Notifications that reach their final status come from the workers as
 * they do, into one spill file per worker (merged by line when printed).
 *
 * @module
 */

import type { BreakerConfig } from "../../webhooks/circuit_breaker.ts";
import type { ReadStats } from "../../webhooks/log/delivery_log.ts";
import {
  DeliveryLogError,
  type DeliveryLogReason,
  InvalidLineError,
} from "../../webhooks/log/delivery_log_error.ts";
import {
  NotificationTable,
  type NotificationTableData,
} from "../../webhooks/notification_table.ts";
import { DEFAULT_RETRY_CONFIG } from "../../webhooks/retry_schedule.ts";
import { NotificationSpill } from "./notification_spill.ts";
import type { EndpointReport, SimulationEvent, SimulationResult } from "../../webhooks/simulate.ts";

/** What one worker is asked to do. */
export interface PartTask {
  /** The log file (the worker reads it itself). */
  path: string;
  /** This worker's partition. */
  index: number;
  /** Partitions in all. */
  count: number;
  /** The policies (one, or two to compare). */
  policies: BreakerConfig[];
  /** Keep the per-notification projection. */
  notifications: boolean;
  /** Count and skip invalid lines. */
  skipInvalid: boolean;
}

/** A batch of notification lines of one worker: `LINE<TAB>JSON` entries, in line order. */
export interface PartFinals {
  /** A batch, not the end. */
  ok: "finals";
  /** The entries. */
  text: string;
  /** How many. */
  count: number;
}

/** What one worker found (its webhooks only). */
export interface PartResult {
  /** Success. */
  ok: true;
  /** Its reader's counts (lines: all lines; records, invalid lines: its own). */
  stats: ReadStats;
  /** Its first record whose time looks like epoch seconds, if any. */
  seconds: { line: number; time: number } | null;
  /** Its first (up to 3) skipped invalid lines. */
  invalid: { line: number; message: string }[];
  /** Its endpoints. */
  webhooks: number;
  /** Its attempts. */
  attempts: number;
  /** Its control lines. */
  enables: number;
  /** Its time range. */
  timeRange: [number, number] | null;
  /** Per policy: totals and events. */
  policies: { suspensions: number; suppressed: number; events: SimulationEvent[] }[];
  /** Its endpoints, first-seen order. */
  endpoints: EndpointReport[];
  /** Its notifications still in progress, or null. */
  notifications: NotificationTableData | null;
}

/** The error that stopped one worker. */
export type PartError =
  | {
    ok: false;
    kind: "line";
    line: number;
    field: string;
    reason: "invalid-line" | "out-of-order";
    message: string;
  }
  | { ok: false; kind: "log"; reason: DeliveryLogReason; message: string; details?: string }
  | { ok: false; kind: "other"; message: string };

/** What {@linkcode simulateParallel} returns. */
export interface ParallelOutcome {
  /** The merged replay. */
  result: SimulationResult;
  /** The merged reader counts. */
  stats: ReadStats;
  /** The first record whose time looks like epoch seconds, if any. */
  seconds: { line: number; time: number } | null;
  /** The first (up to 3) skipped invalid lines, in line order. */
  invalid: { line: number; message: string }[];
  /**
   * With notifications: per worker, the notification lines of notifications
   * that reached their final status, each in line order (merge them by line;
   * the caller closes them).
   */
  finals: NotificationSpill[];
}

/** Options of {@linkcode simulateParallel}. */
export interface ParallelOptions {
  /** The log file. */
  path: string;
  /** Worker threads (partitions), 2 or more. */
  jobs: number;
  /** The policies. */
  policies: BreakerConfig[];
  /** Keep the per-notification projection. */
  notifications?: boolean;
  /** Count and skip invalid lines. */
  skipInvalid?: boolean;
}

function runPart(task: PartTask, spill: NotificationSpill | null): Promise<PartResult | PartError> {
  return new Promise((resolve) => {
    const w = new Worker(new URL("./simulate_worker.ts", import.meta.url), { type: "module" });
    w.onmessage = (ev: MessageEvent<PartResult | PartError | PartFinals>) => {
      if (ev.data.ok === "finals") {
        spill?.addText(ev.data.text, ev.data.count);
        return;
      }
      w.terminate();
      resolve(ev.data);
    };
    w.onerror = (ev: ErrorEvent) => {
      ev.preventDefault();
      w.terminate();
      resolve({ ok: false, kind: "other", message: ev.message });
    };
    w.postMessage(task);
  });
}

/**
 * Replays the log file at `path` in `jobs` worker threads and merges their
 * parts. Throws what a one-thread replay would throw first:
 * {@linkcode InvalidLineError} (the earliest line), a `DeliveryLogError`
 * for gzip data that does not decompress, or an `Error` for an unreadable
 * file. The workers need read permission for the file.
 *
 * @example
 * ```ts
 * import { DEFAULT_BREAKER_CONFIG } from "../../webhooks/circuit_breaker.ts";
 * const { result } = await simulateParallel({ path: "log.ndjson", jobs: 2, policies: [DEFAULT_BREAKER_CONFIG] });
 * ```
 */
export async function simulateParallel(options: ParallelOptions): Promise<ParallelOutcome> {
  const count = Math.max(1, Math.floor(options.jobs));
  const finals: NotificationSpill[] = [];
  try {
    if (options.notifications) {
      for (let i = 0; i < count; i++) finals.push(await NotificationSpill.create());
    }
    const parts = await Promise.all(
      Array.from({ length: count }, (_, index) =>
        runPart({
          path: options.path,
          index,
          count,
          policies: options.policies,
          notifications: options.notifications ?? false,
          skipInvalid: options.skipInvalid ?? false,
        }, finals[index] ?? null)),
    );
    return { ...outcome(parts, options), finals };
  } catch (e) {
    for (const f of finals) f.close();
    throw e;
  }
}

function outcome(
  parts: (PartResult | PartError)[],
  options: ParallelOptions,
): Omit<ParallelOutcome, "finals"> {
  const errors = parts.filter((p): p is PartError => !p.ok);
  if (errors.length > 0) {
    // the earliest invalid line is what one thread would have stopped at
    const lines = errors.filter((e) => e.kind === "line");
    if (lines.length > 0) {
      const e = lines.reduce((a, b) => (b.line < a.line ? b : a));
      throw new InvalidLineError(e.line, e.field, e.message, e.reason);
    }
    const log = errors.find((e) => e.kind === "log");
    if (log !== undefined) {
      throw new DeliveryLogError(log.reason, log.message, { details: log.details });
    }
    throw new Error(errors[0].message);
  }
  const ok = parts as PartResult[];
  return merge(ok, options);
}

function merge(parts: PartResult[], options: ParallelOptions): Omit<ParallelOutcome, "finals"> {
  const endpoints = parts.flatMap((p) => p.endpoints).sort((a, b) => a.firstLine - b.firstLine);
  let min = Infinity;
  let max = -Infinity;
  for (const p of parts) {
    if (p.timeRange !== null) {
      min = Math.min(min, p.timeRange[0]);
      max = Math.max(max, p.timeRange[1]);
    }
  }
  const policies = options.policies.map((config, i) => {
    const events = parts.flatMap((p) => p.policies[i].events).sort((a, b) =>
      a.time - b.time || a.line - b.line
    );
    let suspensions = 0;
    let suppressed = 0;
    for (const p of parts) {
      suspensions += p.policies[i].suspensions;
      suppressed += p.policies[i].suppressed;
    }
    return { config, suspensions, suppressed, events };
  });
  const result: SimulationResult = {
    webhooks: endpoints.length,
    attempts: parts.reduce((n, p) => n + p.attempts, 0),
    enables: parts.reduce((n, p) => n + p.enables, 0),
    timeRange: endpoints.length ? [min, max] : null,
    policies,
    endpoints,
    notifications: options.notifications
      ? NotificationTable.merge(
        DEFAULT_RETRY_CONFIG,
        parts.map((p) => p.notifications!),
      )
      : null,
  };
  const s0 = parts[0].stats;
  const stats: ReadStats = {
    lines: s0.lines,
    format: s0.format,
    records: parts.reduce((n, p) => n + p.stats.records, 0),
    invalidLines: parts.reduce((n, p) => n + p.stats.invalidLines, 0),
    scanned: parts.reduce((n, p) => n + p.stats.scanned, 0),
  };
  const secs = parts.map((p) => p.seconds).filter((s) => s !== null);
  const seconds = secs.length ? secs.reduce((a, b) => (b.line < a.line ? b : a)) : null;
  const invalid = parts.flatMap((p) => p.invalid).sort((a, b) => a.line - b.line).slice(0, 3);
  return { result, stats, seconds, invalid };
}
