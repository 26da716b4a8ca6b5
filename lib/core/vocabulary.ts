/**
 * One vocabulary for every area: the platform's status values. Plain
 * constants, so the `--help` path stays light; `platform/schemas.ts` builds
 * its enum checks from these. (Which HTTP statuses are worth a retry is the
 * platform client's rule: `isRetryableStatus` in `platform/errors.ts`.)
 *
 * @module
 */

/** Webhook endpoint statuses. */
export const WEBHOOK_STATUSES = ["ENABLED", "DISABLED", "SUSPENDED"] as const;
/** A webhook endpoint's status. */
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** Notification statuses (webhooks v2). */
export const NOTIFICATION_STATUSES = ["COMPLETED", "FAILED", "IN_PROGRESS", "ON_HOLD"] as const;
/** A notification's status. */
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

/**
 * The webhook event types the platform accepts in an endpoint's `events`
 * (the `WebhookEvent` enum of the official TypeScript SDK 18.0.0).
 */
export const WEBHOOK_EVENTS = [
  "transaction.created",
  "transaction.status.updated",
  "transaction.approval_status.updated",
  "transaction.network_records.processing_completed",
  "external_wallet.asset.added",
  "external_wallet.asset.removed",
  "internal_wallet.asset.added",
  "internal_wallet.asset.removed",
  "contract_wallet.asset.added",
  "contract_wallet.asset.removed",
  "vault_account.created",
  "vault_account.asset.added",
  "vault_account.asset.balance_updated",
  "embedded_wallet.status.updated",
  "embedded_wallet.created",
  "embedded_wallet.asset.balance_updated",
  "embedded_wallet.asset.added",
  "embedded_wallet.account.created",
  "embedded_wallet.device.added",
  "onchain_data.updated",
  "connection.added",
  "connection.removed",
  "connection.request.waiting_peer_approval",
  "connection.request.rejected_by_peer",
] as const;

/** Notification fields a list can be sorted by. */
export const NOTIFICATION_SORT_FIELDS = [
  "id",
  "createdAt",
  "updatedAt",
  "status",
  "eventType",
  "resourceId",
] as const;

/** Resend-job statuses. */
export const RESEND_JOB_STATUSES = ["QUEUED", "IN_PROGRESS", "COMPLETED", "FAILED"] as const;
/** A resend job's status. */
export type ResendJobStatus = (typeof RESEND_JOB_STATUSES)[number];

/**
 * Transaction statuses on the way to completion, in order
 * (`PENDING_AUTHORIZATION`: held for an approval policy).
 */
const TRANSACTION_PROGRESS_STATUSES = [
  "SUBMITTED",
  "PENDING_AUTHORIZATION",
  "PENDING_SIGNATURE",
  "BROADCASTING",
  "CONFIRMING",
] as const;

/**
 * A transaction status as a person waiting for it would say it, for progress
 * lines (`waiting for approval`, `signing`, ...); a status this table does not
 * know (the platform has more than the emulator) is shown lower-cased.
 *
 * @example
 * ```ts
 * transactionStatusInWords("PENDING_AUTHORIZATION"); // "waiting for approval"
 * ```
 */
export function transactionStatusInWords(status: string): string {
  return STATUS_WORDS[status] ?? status.toLowerCase().replaceAll("_", " ");
}

const STATUS_WORDS: Readonly<Record<string, string>> = {
  SUBMITTED: "submitted",
  QUEUED: "queued behind the account's earlier transactions",
  PENDING_AML_SCREENING: "in AML screening",
  PENDING_ENRICHMENT: "being enriched",
  PENDING_AUTHORIZATION: "waiting for approval",
  PENDING_3RD_PARTY_MANUAL_APPROVAL: "waiting for a third party's approval",
  PENDING_3RD_PARTY: "waiting for a third party",
  PENDING_SIGNATURE: "signing",
  BROADCASTING: "broadcasting",
  CONFIRMING: "confirming",
  COMPLETED: "completed",
};

/** Transaction statuses that end in failure; nothing changes after them. */
export const TRANSACTION_FAILURE_STATUSES = [
  "CANCELLED",
  "REJECTED",
  "BLOCKED",
  "FAILED",
  "TIMEOUT",
] as const;

/** Transaction statuses after which nothing changes: `COMPLETED` and the failures. */
export const TRANSACTION_FINAL_STATUSES = ["COMPLETED", ...TRANSACTION_FAILURE_STATUSES] as const;

/** Every transaction status. */
export const TRANSACTION_STATUSES = [
  ...TRANSACTION_PROGRESS_STATUSES,
  ...TRANSACTION_FINAL_STATUSES,
] as const;
/** A transaction's status. */
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

/** Statuses at which a transaction with a `txHash` counts as sent. */
export const TRANSACTION_SENT_STATUSES = ["BROADCASTING", "CONFIRMING", "COMPLETED"] as const;

/**
 * Whether a transaction status is final (nothing changes after it).
 *
 * @example
 * ```ts
 * isFinalTransactionStatus("CONFIRMING"); // false
 * isFinalTransactionStatus("REJECTED"); // true
 * ```
 */
export function isFinalTransactionStatus(status: string): boolean {
  return (TRANSACTION_FINAL_STATUSES as readonly string[]).includes(status);
}
