/**
 * `service` as a library: the CLI entry (`run`), the platform API client and
 * its typed operations, their error base, the platform's status vocabulary,
 * and {@linkcode verifyWebhookSignature} for webhook receivers. The
 * executable is `main.ts`.
 *
 * @example
 * ```ts
 * import { loadCredentials, PlatformClient, listWebhooks } from "./mod.ts";
 * const client = new PlatformClient(await loadCredentials({ apiKey: "...", privateKey: "./api.pem" }));
 * for await (const hook of listWebhooks(client)) console.log(hook.id, hook.status);
 * ```
 *
 * @example Verify a webhook delivery in a receiver
 * ```ts
 * import { SIGNATURE_HEADER, verifyWebhookSignature } from "./mod.ts";
 * Deno.serve(async (req) => {
 *   const raw = new Uint8Array(await req.arrayBuffer());
 *   const check = await verifyWebhookSignature(
 *     raw,
 *     req.headers.get(SIGNATURE_HEADER),
 *     "http://127.0.0.1:40123/.well-known/jwks.json", // fetched once, again only for an unknown kid
 *   );
 *   return new Response(null, { status: check.ok ? 200 : 400 });
 * });
 * ```
 *
 * @module
 */

export { ExitCode, exitCodeFor, run } from "./lib/cli/mod.ts";
export type { CommandContext, Io, TakeSignals, Writer } from "./lib/cli/mod.ts";
export * from "./lib/platform/mod.ts";
export {
  BaseError,
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
export {
  JwksUnavailableError,
  RemoteJwks,
  SIGNATURE_HEADER,
  verifyWebhookSignature,
} from "./lib/webhooks/mod.ts";
export type {
  Jwks,
  JwksResolver,
  PublicJwk,
  RemoteJwksOptions,
  SignatureCheck,
  SignatureFailure,
} from "./lib/webhooks/mod.ts";
// Types the exports above name, re-exported so that the package documents them.
export type { FlagSpec, FlagType, LoadedSources, ValueSource } from "./lib/cli/mod.ts";
export type { RsaAlg, RsaSigner } from "./lib/core/mod.ts";
