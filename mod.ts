/**
 * `service` as a library: the CLI entry (`run`), the platform API client and
 * its typed operations, their error base and the platform's status
 * vocabulary. The executable is `main.ts`.
 *
 * @example
 * ```ts
 * import { loadCredentials, PlatformClient, listWebhooks } from "./mod.ts";
 * const client = new PlatformClient(await loadCredentials({ apiKey: "...", privateKey: "./api.pem" }));
 * for await (const hook of listWebhooks(client)) console.log(hook.id, hook.status);
 * ```
 *
 * @module
 */

export { ExitCode, exitCodeFor, run } from "./lib/cli/mod.ts";
export type { CommandContext, Io, TakeSignals, Writer } from "./lib/cli/mod.ts";
export * from "./lib/platform/mod.ts";
export {
  BaseError,
  isRetryableHttpStatus,
  NOTIFICATION_SORT_FIELDS,
  NOTIFICATION_STATUSES,
  RESEND_JOB_STATUSES,
  TRANSACTION_FAILURE_STATUSES,
  TRANSACTION_SENT_STATUSES,
  TRANSACTION_STATUSES,
  WEBHOOK_STATUSES,
} from "./lib/core/mod.ts";
export type {
  BaseErrorOptions,
  NotificationStatus,
  ResendJobStatus,
  TransactionStatus,
  WebhookStatus,
} from "./lib/core/mod.ts";
export { VERSION } from "./lib/version.ts";
