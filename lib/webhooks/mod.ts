/**
 * Webhook delivery rules shared by `service breaker simulate` and the
 * emulator's delivery engine (`../shared/spec/breaker.md`): each rule lives
 * here once, as pure functions with no clock and no I/O. This barrel lists
 * what the other areas use (and, as types, what their signatures name);
 * tests import the files themselves.
 *
 * - Retry schedule (`retry_schedule.ts`): {@linkcode classifyOutcome}
 *   (breaker.md §1) and {@linkcode afterAttempt} (§2), with
 *   {@linkcode RetryConfig} (the emulator divides the delays by its
 *   `--timeScale`).
 * - Circuit breaker (`circuit_breaker.ts`): {@linkcode transition} over
 *   {@linkcode BreakerState} with {@linkcode BreakerConfig} (§3);
 *   {@linkcode restoreBreakerState} reads a state back from JSON.
 * - Window error rate (`window_error_rate.ts`): the window (t - W, t] and
 *   its rate, once, for the breaker, the metric and the console
 *   ({@linkcode lastActiveWindowErrors}).
 * - On hold (`on_hold.ts`): {@linkcode waitingStatus}, a notification of an
 *   endpoint that is not ENABLED waits ON_HOLD.
 *
 * And `service breaker simulate` on top of them:
 *
 * - `log/`: {@linkcode readDeliveryLog} reads NDJSON/CSV, gzip or not, from
 *   any stream of byte chunks into {@linkcode LogRecord}s (the command opens
 *   the file); a byte scanner reads the common line shape, `JSON.parse` the
 *   rest. Its errors are {@linkcode DeliveryLogError}s with a `reason` code.
 * - `simulate.ts`: {@linkcode Simulation} replays records under one or two
 *   policies (a virtual clock from the log's times).
 * - `report.ts`, `plot.ts`: the §5 output lines, the comparison of two
 *   policies, and the SVG picture.
 *
 * And for receivers:
 *
 * - `signature.ts`: {@linkcode verifyWebhookSignatureWithKeys}, the one verifier of
 *   a delivery's `Service-Webhook-Signature` (detached JWS, RS512, `kid`),
 *   with typed failure reasons; `remote_jwks.ts`: {@linkcode RemoteJwks}, a
 *   JWKS URL fetched once and again only for an unknown `kid`.
 *
 * @example Deliver, and feed the endpoint's breaker
 * ```ts
 * import { classifyOutcome, restoreBreakerState, transition } from "./mod.ts";
 *
 * const breaker = restoreBreakerState({ status: "ENABLED", window: [], bandSince: null, lastAttemptAt: null });
 * const outcome = { responseCode: 503 } as const;
 * const { effect } = transition(breaker, { type: "attempt", time: Date.now(), error: classifyOutcome(outcome).error });
 * if (effect?.type === "suspended") {
 *   // stop delivering to this endpoint
 * }
 * ```
 *
 * @module
 */

export {
  afterAttempt,
  classifyOutcome,
  DEFAULT_RETRY_CONFIG,
  MAX_ATTEMPTS,
} from "./retry_schedule.ts";
export type {
  AttemptOutcome,
  NotificationProgress,
  OutcomeClass,
  RetryConfig,
  ScheduleStatus,
} from "./retry_schedule.ts";
export { DEFAULT_BREAKER_CONFIG, restoreBreakerState, transition } from "./circuit_breaker.ts";
export type {
  BreakerConfig,
  BreakerEffect,
  BreakerEvent,
  BreakerSnapshot,
  BreakerState,
  BreakerStatus,
  Suspension,
} from "./circuit_breaker.ts";
export { waitingStatus } from "./on_hold.ts";
export {
  errorRate,
  lastActiveWindowErrors,
  outsideWindow,
  windowErrors,
} from "./window_error_rate.ts";
export type { WindowAttempt, WindowErrors } from "./window_error_rate.ts";
export { readDeliveryLog } from "./log/delivery_log.ts";
export type { ReadOptions, ReadStats } from "./log/delivery_log.ts";
export { copyRecord, emptyRecord, fieldsToRecord } from "./log/log_record.ts";
export type { LogFields, LogRecord } from "./log/log_record.ts";
export { DeliveryLogError } from "./log/delivery_log_error.ts";
export type { DeliveryLogReason, InvalidLineError } from "./log/delivery_log_error.ts";
export { iso, Simulation } from "./simulate.ts";
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
export type { NotificationReport, NotificationTable, OnFinal } from "./notification_table.ts";
export type { RateSeries } from "./rate_series.ts";
export {
  compareEndpoints,
  comparisonRecord,
  comparisonSummary,
  eventRecord,
  notificationRecord,
  notificationRecords,
  summaryRecord,
} from "./report.ts";
export type { EndpointComparison } from "./report.ts";
export { renderPlot } from "./plot.ts";
export type { PlotOptions } from "./plot.ts";
export {
  JwksUnavailableError,
  SIGNATURE_HEADER,
  verifyWebhookSignatureWithKeys,
} from "./signature.ts";
export type {
  Jwks,
  JwksResolver,
  PublicJwk,
  SignatureCheck,
  SignatureFailure,
} from "./signature.ts";
export { asJwks, RemoteJwks, verifyWebhookSignature } from "./remote_jwks.ts";
export type { RemoteJwksOptions } from "./remote_jwks.ts";
/** The base of {@linkcode DeliveryLogError} (from `lib/core`, listed for the docs). */
export type { BaseError, BaseErrorOptions } from "../core/mod.ts";
// Types the exports above name, re-exported so that this barrel documents them.
export type {
  NOTIFICATION_STATUSES,
  NotificationStatus,
  WEBHOOK_STATUSES,
  WebhookStatus,
} from "../core/mod.ts";
