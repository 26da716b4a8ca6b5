/**
 * The emulator's replies and errors: every error is `{message, code}` (the
 * platform's shape) with an HTTP status; routes return a {@linkcode Reply}
 * and the handler turns it into a `Response` in one place.
 *
 * @module
 */

import { BaseError } from "../../core/mod.ts";

/** What a route answers: a status, a JSON body (or none) and extra headers. */
export interface Reply {
  /** HTTP status. */
  status: number;
  /** JSON-serialisable body; `undefined` sends an empty body. */
  body?: unknown;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** Raw text body with its content type (e.g. the console page); wins over `body`. */
  text?: { contentType: string; value: string };
}

/**
 * An error a route throws to answer `{message, code}` with `status`.
 *
 * @example
 * ```ts
 * throw new ApiError(404, `Vault account "7" not found.`, 1003);
 * ```
 */
export class ApiError extends BaseError {
  /** HTTP status of the answer. */
  readonly status: number;
  /** The platform-style numeric error code in the body. */
  readonly code: number;
  /** Extra headers (e.g. `Retry-After`). */
  readonly headers: Record<string, string>;
  /** An error answered with `status` and `{message, code}`. */
  constructor(status: number, message: string, code: number, headers: Record<string, string> = {}) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/** Numeric error codes the emulator puts in `{message, code}`. */
export const ErrorCode = {
  badRequest: 1000,
  notFound: 1003,
  unauthorized: 1007,
  forbidden: 1403,
  conflict: 1009,
  tooLarge: 1013,
  methodNotAllowed: 1015,
  nodeNeeded: 1016,
  notServed: 1404,
  rateLimited: 1429,
  internal: 1500,
  injected: 1599,
} as const;

/**
 * A JSON reply.
 *
 * @example
 * ```ts
 * const reply = json(200, { id: "0" }); // what a route returns
 * ```
 */
export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return { status, body, headers };
}

/** Marks a response whose connection must be dropped without an answer (fault injection). */
export const DROP_HEADER = "x-emulator-drop-connection";

/** True when the handler asked the server to drop the connection instead of answering. */
export function isDropResponse(response: Response): boolean {
  return response.headers.get(DROP_HEADER) === "1";
}
