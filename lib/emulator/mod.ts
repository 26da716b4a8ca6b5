/**
 * `service emulator`: a local stand-in for the platform API — vault
 * accounts, assets, transactions signed with real keys and sent to a real
 * node, request authentication verified for real, idempotency, fault
 * injection, SQLite state.
 *
 * @example
 * ```ts
 * import { startEmulator } from "./lib/emulator/mod.ts";
 * const emu = await startEmulator({ rpcUrl: "http://127.0.0.1:8545" });
 * const res = await emu.handler(new Request(`${emu.apiBaseUrl}/console`));
 * await emu.stop();
 * ```
 *
 * @module
 */

export { EmulatorConfigError, startEmulator } from "./emulator.ts";
export type { EmulatorOptions, RunningEmulator } from "./emulator.ts";
export { createHandler } from "./http/handler.ts";
export { Idempotency, IDEMPOTENCY_TTL_MS } from "./http/idempotency.ts";
export { IDEMPOTENCY_SCHEMA, IdempotencyStore } from "./http/idempotency_store.ts";
export type { IdempotencyRecord } from "./http/idempotency_store.ts";
export type { EmulatorHandler } from "./http/handler.ts";
export { ROUTE_MODULES } from "./http/routes.ts";
export { Router } from "./http/router.ts";
export type { Match, Route, RouteAuth, RouteModule, RouteRequest } from "./http/router.ts";
export { ApiError, DROP_HEADER, ErrorCode, isDropResponse, json } from "./http/reply.ts";
export type { Reply } from "./http/reply.ts";
export { EventBus } from "./events.ts";
export type { EmulatorEvent, EventSink } from "./events.ts";
export { Faults, parseFaultSpec } from "./faults/faults.ts";
export type { Fault, FaultSpec } from "./faults/faults.ts";
export { dropResponse, RequestFaults, transactionFault } from "./faults/apply.ts";
export type { TransactionFault } from "./faults/apply.ts";
export { Store } from "./store.ts";
export type { Row } from "./store.ts";
export type { EmulatorConfig, EmulatorContext, WebhookSettings } from "./context.ts";
export { chainInfo, KNOWN_CHAINS } from "./vault/assets.ts";
export type { ChainInfo } from "./vault/assets.ts";
export { ANVIL_MNEMONIC, VaultKeys } from "./vault/keys.ts";
export { TransactionEngine } from "./transactions/engine.ts";
export type { EngineContext } from "./transactions/engine.ts";
export {
  CANCELLABLE_STATUSES,
  canFollow,
  FORCEABLE_STATUSES,
  HELD_STATUS,
  TRANSITIONS,
} from "./transactions/status.ts";
export type { EmulatorTransactionStatus, ForceableStatus } from "./transactions/status.ts";
export { TRANSACTION_STATUSES } from "../core/mod.ts";
export type { TransactionStatus } from "../core/mod.ts";
export type { TransactionRecord } from "./transactions/store.ts";
export { classifyNodeError } from "./transactions/node_errors.ts";
export type { NodeFailure } from "./transactions/node_errors.ts";
export { MAX_TOKEN_LIFETIME_SECONDS, verifyRequest } from "./http/auth.ts";
export { NonceCache, NONCES_SCHEMA } from "./http/nonce_cache.ts";
export type { AuthInput } from "./http/auth.ts";
export { ensureApiUser } from "./http/api_user.ts";
export type { ApiUser } from "./http/api_user.ts";
export { Chain } from "./chain.ts";
export type { FeeLevel, Fees } from "./chain.ts";
export { serveHandler } from "./http/server.ts";
export type { HttpServer } from "./http/server.ts";
export { startWebhooks } from "./webhooks/start.ts";
export type { Webhooks, WebhooksOptions } from "./webhooks/start.ts";
export { WebhookEngine } from "./webhooks/engine.ts";
export type { BodySigner, WebhookEngineOptions, WebhookEvent } from "./webhooks/engine.ts";
export type { WebhookPatch } from "./webhooks/endpoints.ts";
export { Scheduler, systemClock } from "./webhooks/scheduler.ts";
export type { Clock, DueEntry, TimerHandle } from "./webhooks/scheduler.ts";
export { NOTIFICATION_SORT_KEYS, WebhookStore } from "./webhooks/store.ts";
export type { NotificationFilter, NotificationSortKey } from "./webhooks/store.ts";
export type {
  AttemptRow,
  JobRow,
  NotificationRow,
  OutboxMail,
  WebhookRow,
} from "./webhooks/rows.ts";
export { deliverOnce } from "./webhooks/delivery.ts";
export type { AttemptRecord, DeliverOptions } from "./webhooks/delivery.ts";
export { SnapshotPager } from "./webhooks/notification_paging.ts";
export { suspensionMail } from "./webhooks/suspension_mail.ts";
export type { Suspension, SuspensionMail } from "./webhooks/suspension_mail.ts";
export type { Jwks, PublicJwk } from "./webhooks/signing/signer.ts";
export { cursorInt, decodeCursor, encodeCursor } from "./http/cursor.ts";
export type { CursorFields } from "./http/cursor.ts";
export type { BreakerConfig, RetryConfig } from "../webhooks/mod.ts";
export { NOTIFICATION_STATUSES, RESEND_JOB_STATUSES, WEBHOOK_STATUSES } from "../core/mod.ts";
export type { NotificationStatus, ResendJobStatus, WebhookStatus } from "../core/mod.ts";
