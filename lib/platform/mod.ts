/**
 * The platform API client: credentials, request signing, the one request
 * path, and typed operations.
 *
 * @module
 */

export { abortableSleep, noReplayFetch, PlatformClient } from "./client.ts";
export type {
  AnswerSchema,
  ApiResponse,
  ClientOptions,
  QueryValue,
  RequestOptions,
} from "./client.ts";
export {
  importPrivateKeySigner,
  loadCredentials,
  MAX_PRIVATE_KEY_BYTES,
  normalizeBaseUrl,
  readPrivateKeyFile,
} from "./credentials.ts";
export { buildApiBaseUrl, buildJwksUrl, NO_ADDRESS } from "./production.ts";
export type { CredentialInput, Credentials } from "./credentials.ts";
export {
  CredentialsError,
  isRetryable,
  isRetryableStatus,
  PlatformApiError,
  PlatformResponseError,
  PlatformTimeoutError,
  PlatformUnreachableError,
} from "./errors.ts";
export { sha256Hex, signRequestToken } from "./jwt.ts";
export type { RequestClaims } from "./jwt.ts";
export type { Notification, NotificationAttempt, Page, ResendJob, Webhook } from "./schemas.ts";
export {
  countResendByResource,
  createWebhook,
  deleteWebhook,
  getErrorRate,
  getNotification,
  getResendJob,
  getWebhook,
  listAttempts,
  listNotifications,
  listNotificationsPage,
  listWebhooks,
  resendByQuery,
  resendByResource,
  resendFailed,
  resendNotification,
  updateWebhook,
} from "./webhooks.ts";
export type { NotificationQuery, ResendQuery, WebhookCreate } from "./webhooks.ts";
export { followResendJob } from "./resend_job.ts";
export type { FollowedJob, FollowOptions } from "./resend_job.ts";
export { defaultRunKey, resendAll, resendKey, StatusTally } from "./resend_all.ts";
export type { OneByOneResult, ResendAllResult, ResendAllRun } from "./resend_all.ts";
export { NotificationTail } from "./notification_tail.ts";
export type { TailLine } from "./notification_tail.ts";
export { getFirstAddress, listVaultAccounts } from "./vaults.ts";
export type { VaultAccount, VaultAddress } from "./vaults.ts";
export { listWhitelistedAddresses } from "./wallets.ts";
export type { WhitelistedAddress, WhitelistedWalletType } from "./wallets.ts";
export { findNativeAssetId, getAsset, listBlockchains } from "./blockchains.ts";
export type { Asset, Blockchain } from "./blockchains.ts";
export {
  cancelTransaction,
  createTransaction,
  findTransactionByExternalId,
  getTransaction,
  listTransactions,
} from "./transactions.ts";
export type { CreateTransactionResponse, Transaction, TransactionRequest } from "./transactions.ts";
// Types the exports above name, re-exported so that this barrel documents them.
export type {
  BaseError,
  RESEND_JOB_STATUSES,
  ResendJobStatus,
  RsaAlg,
  RsaSigner,
} from "../core/mod.ts";
