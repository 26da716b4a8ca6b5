/**
 * Errors of the platform client, and which of them are worth a retry. The CLI
 * maps them to exit codes in one place (`lib/cli/errors.ts`); the bridge maps
 * them to JSON-RPC errors in one place. Light (no client): the emulator's
 * idempotency records take {@linkcode isRetryableStatus} from here.
 *
 * @module
 */

import { BaseError, type BaseErrorOptions } from "../core/mod.ts";
function hintFor(status: number, retryAfterMs?: number, location?: string): string {
  if (status >= 300 && status < 400) {
    return location
      ? `It redirects to ${location}: give that address as --apiBaseUrl if it is the API (redirects are not followed, so that signed requests go nowhere else).`
      : "It is a redirect without a Location: check --apiBaseUrl (redirects are not followed).";
  }
  if (status === 401) {
    return "Check the API key and private key (--apiKey, --privateKey) and --apiBaseUrl.";
  }
  if (status === 403) {
    return "The API key was accepted, but its API user's role may not make this call (a Viewer only reads; managing webhooks needs an Admin or Non-Signing Admin): use the key of a user whose role allows it.";
  }
  if (status === 404) return "Check the id and --apiBaseUrl.";
  if (status === 429) {
    return retryAfterMs !== undefined
      ? `Rate limited: wait ${Math.ceil(retryAfterMs / 1000)} s and try again.`
      : "Rate limited: wait and try again.";
  }
  if (status >= 500) return "The platform failed; try again later.";
  return "Check the values given.";
}

/** The platform answered with an HTTP error status (after any retries). */
export class PlatformApiError extends BaseError {
  /** HTTP status. */
  readonly status: number;
  /** The platform's numeric error `code`, when its body had one. */
  readonly code: number | undefined;
  /** The platform's own `message`, when its body had one. */
  readonly platformMessage: string | undefined;
  /** `X-Request-ID` of the response. */
  readonly requestId: string | undefined;
  /** `Retry-After` in milliseconds, when the platform sent one. */
  readonly retryAfterMs: number | undefined;
  /** The response body as received (JSON or text). */
  readonly body: unknown;

  /** Builds the error and its one-line message from the answer. */
  constructor(init: {
    operation: string;
    status: number;
    statusText?: string;
    code?: number;
    platformMessage?: string;
    requestId?: string;
    retryAfterMs?: number;
    body?: unknown;
    /** Where a 3xx answer redirects (origin and path only: a query may hold a token). */
    location?: string;
  }) {
    const said = init.platformMessage ? ` (${JSON.stringify(init.platformMessage)})` : "";
    super(
      `Cannot ${init.operation}: the platform answered ${init.status}${
        init.statusText ? " " + init.statusText : ""
      }${said}. ${hintFor(init.status, init.retryAfterMs, init.location)}`,
    );
    this.name = "PlatformApiError";
    this.status = init.status;
    this.code = init.code;
    this.platformMessage = init.platformMessage;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
    this.body = init.body;
  }
}

/** The platform could not be reached (connection refused, DNS, TLS), after retries. */
export class PlatformUnreachableError extends BaseError {
  /** `operation` says what was being done; `baseUrl` where. */
  constructor(operation: string, baseUrl: string, options?: BaseErrorOptions) {
    super(
      `Cannot ${operation}: the platform at ${baseUrl} could not be reached. Check --apiBaseUrl and the network.`,
      options,
    );
    this.name = "PlatformUnreachableError";
  }
}

/** No answer within the request timeout, after retries. */
export class PlatformTimeoutError extends BaseError {
  /** `operation` says what was being done; `timeoutMs` the limit. */
  constructor(operation: string, timeoutMs: number, options?: BaseErrorOptions) {
    super(
      `Cannot ${operation}: the platform did not answer within ${timeoutMs} ms. Try again, or raise --timeout.`,
      options,
    );
    this.name = "PlatformTimeoutError";
  }
}

/**
 * The platform answered 2xx with a body that does not have the documented
 * shape: most often --apiBaseUrl points at something else (a web page, a
 * proxy, another API), which the message says.
 */
export class PlatformResponseError extends BaseError {
  /** `detail` names the field that did not fit; `options.baseUrl` where the answer came from. */
  constructor(
    operation: string,
    detail: string,
    options?: BaseErrorOptions & { baseUrl?: string },
  ) {
    super(
      `Cannot ${operation}: the platform's answer has an unexpected shape (${detail}). Check that --apiBaseUrl${
        options?.baseUrl ? ` (${options.baseUrl})` : ""
      } is the platform's API.`,
      options,
    );
    this.name = "PlatformResponseError";
  }
}

/** The credentials are missing, unreadable or malformed. Never carries a secret. */
export class CredentialsError extends BaseError {
  /** The class name (its message must never contain the secret). */
  override name = "CredentialsError";
}

/**
 * Whether a failed platform call is worth a retry: the platform could not be
 * reached, did not answer in time, or answered a status that
 * {@linkcode isRetryableStatus} accepts (408, 429, 5xx). Any other error
 * (4xx, a bad answer's shape, bad credentials, a bug) is not.
 *
 * @example
 * ```ts
 * isRetryable(new PlatformApiError({ operation: "list webhooks", status: 503 })); // true
 * isRetryable(new PlatformApiError({ operation: "list webhooks", status: 404 })); // false
 * ```
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof PlatformUnreachableError || error instanceof PlatformTimeoutError) {
    return true;
  }
  return error instanceof PlatformApiError && isRetryableStatus(error.status);
}

/**
 * Whether an HTTP error status from the platform is worth a retry: 408,
 * 429 and every 5xx. The platform client's retry loop, the emulator's
 * idempotency records (an answer worth a retry is not kept) and `notifications
 * tail --follow` all use this one rule.
 *
 * @example
 * ```ts
 * isRetryableStatus(503); // true
 * isRetryableStatus(408); // true
 * isRetryableStatus(404); // false
 * ```
 */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}
