/**
 * The domain errors: what engines and checks throw when a request cannot
 * be carried out, without saying how a surface answers it. Each surface maps
 * them in its one place: the emulator's request handler
 * (`emulator/http/handler.ts`) to HTTP 400/404, the CLI to an exit code.
 * Anything else that escapes is a bug, never "bad request".
 *
 * @module
 */

import { BaseError } from "./errors.ts";

/**
 * The input is not acceptable: a missing or malformed field, a value out of
 * range, a state that does not allow the operation. The message names the
 * value and what is expected.
 *
 * @example
 * ```ts
 * throw new BadRequestError("limit must be an integer from 1 to 500.");
 * ```
 */
export class BadRequestError extends BaseError {
  /** The class name. */
  override name = "BadRequestError";
}

/**
 * The thing asked for does not exist (or no longer does).
 *
 * @example
 * ```ts
 * throw new NotFoundError(`Webhook "w1" not found.`);
 * ```
 */
export class NotFoundError extends BaseError {
  /** The class name. */
  override name = "NotFoundError";
}

/**
 * The request clashes with something that already exists (e.g. an
 * `externalTxId` used by another transaction).
 *
 * @example
 * ```ts
 * throw new ConflictError(`externalTxId "x" was already used by another transaction; it must be unique.`);
 * ```
 */
export class ConflictError extends BaseError {
  /** The class name. */
  override name = "ConflictError";
}
