/**
 * Webhook delivery rules shared by `service breaker simulate` and the
 * emulator's delivery engine (`../shared/spec/breaker.md`): each rule lives
 * here once, as pure functions with no clock and no I/O.
 *
 * - Retry schedule (`retry_schedule.ts`): {@linkcode classifyOutcome}
 *   (breaker.md §1), {@linkcode initialProgress} and {@linkcode afterAttempt}
 *   (§2), with {@linkcode RetryConfig} (the emulator divides the delays by
 *   its `--timeScale`).
 * - Circuit breaker (`circuit_breaker.ts`): {@linkcode transition} over
 *   {@linkcode BreakerState} with {@linkcode BreakerConfig} (§3), and
 *   {@linkcode windowErrorRate} for the metrics endpoint. `transition`
 *   updates the state object in place (speed) and returns it;
 *   {@linkcode step} is the same without the wrapper object.
 *   {@linkcode snapshotBreakerState}/{@linkcode restoreBreakerState} turn a
 *   state into JSON and back (for a state file).
 *
 * And `service breaker simulate` on top of them:
 *
 * - `log/`: {@linkcode readDeliveryLog} reads NDJSON/CSV, gzip or not, from
 *   any stream of byte chunks into {@linkcode LogRecord}s (the command opens
 *   the file); a byte scanner reads the common line shape, `JSON.parse` the
 *   rest. Its errors are {@linkcode DeliveryLogError}s with a `reason` code.
 * - `simulate.ts`: {@linkcode Simulation} replays records under one or two
 *   policies (a virtual clock from the log's times).
 * - `report.ts`, `plot.ts`, `rate_series.ts`: the §5 output lines, the
 *   comparison of two policies, and the SVG picture.
 *
 * @example Deliver, and feed the endpoint's breaker
 * ```ts
 * import { afterAttempt, classifyOutcome, initialBreakerState, initialProgress, transition } from "./mod.ts";
 *
 * const breaker = initialBreakerState();
 * let progress = initialProgress();
 * const outcome = { responseCode: 503 } as const;
 * const now = Date.now();
 * const { effect } = transition(breaker, { type: "attempt", time: now, error: classifyOutcome(outcome).error });
 * if (effect?.type !== "suppressed") progress = afterAttempt(progress, outcome, now);
 * ```
 *
 * @module
 */

export {
  afterAttempt,
  classifyOutcome,
  DEFAULT_RETRY_CONFIG,
  FAILURE_REASONS,
  initialProgress,
  MAX_ATTEMPTS,
  RETRY_DELAYS_SECONDS,
} from "./retry_schedule.ts";
export type {
  AttemptOutcome,
  NotificationProgress,
  NotificationStatus,
  OutcomeClass,
  RetryConfig,
} from "./retry_schedule.ts";
export {
  cloneBreakerState,
  DEFAULT_BREAKER_CONFIG,
  initialBreakerState,
  restoreBreakerState,
  snapshotBreakerState,
  step,
  transition,
  validateBreakerConfig,
  windowErrorRate,
} from "./circuit_breaker.ts";
export type {
  BreakerConfig,
  BreakerEffect,
  BreakerEvent,
  BreakerSnapshot,
  BreakerState,
  BreakerStatus,
} from "./circuit_breaker.ts";
export { readDeliveryLog } from "./log/delivery_log.ts";
export type { ReadOptions, ReadStats } from "./log/delivery_log.ts";
export { copyRecord, emptyRecord, fieldsToRecord, parseJsonLine } from "./log/log_record.ts";
export type { LogRecord } from "./log/log_record.ts";
export { parseNdjsonLine } from "./log/ndjson_scanner.ts";
export { splitCsvLine } from "./log/csv.ts";
export { decompressIfGzip } from "./log/gzip.ts";
export { DeliveryLogError, InvalidLineError } from "./log/delivery_log_error.ts";
export type { DeliveryLogReason } from "./log/delivery_log_error.ts";
export { iso, simulate, Simulation } from "./simulate.ts";
export { NotificationTable } from "./notification_table.ts";
export type { NotificationReport } from "./notification_table.ts";
export type {
  EnabledEvent,
  EndpointReport,
  PolicyTotals,
  PolicyTrack,
  SimulationEvent,
  SimulationOptions,
  SimulationResult,
  SuspendedEvent,
} from "./simulate.ts";
export { HAS_RATE, IN_BAND, RateSeries, SUSPENDED } from "./rate_series.ts";
export {
  compareEndpoints,
  comparisonRecord,
  eventRecord,
  notificationRecords,
  summaryRecord,
} from "./report.ts";
export type { EndpointComparison } from "./report.ts";
export { humanDuration, renderPlot } from "./plot.ts";
export type { PlotOptions } from "./plot.ts";
