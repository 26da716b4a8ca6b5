/**
 * What every area shares: the error base, the encoding helper, the
 * vocabulary of statuses and the one RSA signer and verifier (WebCrypto).
 * Light on purpose (no viem): safe on the `--help` path.
 *
 * @example
 * ```ts
 * import { BaseError, toBase64Url } from "./mod.ts";
 * ```
 *
 * @module
 */

export { BaseError, messageOf, walk } from "./errors.ts";
export type { BaseErrorOptions } from "./errors.ts";
export { BadRequestError, ConflictError, NotFoundError } from "./errors.ts";
export { hostnameOf, isLoopbackBind, isLoopbackHost, sameText } from "./loopback.ts";
export { blockedPortReason } from "./blocked_ports.ts";
export { MinHeap } from "./min_heap.ts";
export { nextMacrotask } from "./macrotask.ts";
export { signalExitCode } from "./signals.ts";
export { RsaSigner, RsaVerifier } from "./rsa.ts";
export type { RsaAlg } from "./rsa.ts";
export {
  concatBytes,
  fromBase64,
  fromBase64Url,
  fromHex,
  toBase64,
  toBase64Url,
  toHex,
} from "./encoding.ts";
export {
  isFinalTransactionStatus,
  NOTIFICATION_SORT_FIELDS,
  NOTIFICATION_STATUSES,
  RESEND_JOB_STATUSES,
  TRANSACTION_FAILURE_STATUSES,
  TRANSACTION_FINAL_STATUSES,
  TRANSACTION_SENT_STATUSES,
  TRANSACTION_STATUSES,
  transactionStatusInWords,
  WEBHOOK_EVENTS,
  WEBHOOK_STATUSES,
} from "./vocabulary.ts";
export type {
  NotificationStatus,
  ResendJobStatus,
  TransactionStatus,
  WebhookStatus,
} from "./vocabulary.ts";
