/**
 * The one error of `lib/breaker`, with a reason code that the command maps
 * to its exit code and words (`cli/breaker.ts`).
 *
 * @module
 */

import { BaseError, type BaseErrorOptions } from "../core/mod.ts";

/**
 * Why a breaker read or file stopped:
 * - `platform-bound`: the platform's answer broke a stated bound (a page
 *   larger than asked, too many attempts for one notification, attempts the
 *   merge cannot order within its bound, notifications out of order);
 * - `invalid-attempt`: an attempt the platform listed is not a valid one;
 * - `file`: a log, a temporary or a `--save` file cannot be read, made or written;
 * - `usage`: what was asked for does not make sense (a window that ends before it starts).
 */
export type BreakerErrorReason = "platform-bound" | "invalid-attempt" | "file" | "usage";

/**
 * See {@linkcode BreakerErrorReason}; the message says what and what to do.
 *
 * @example
 * ```ts
 * throw new BreakerError("file", `Cannot write the log to "x": it is a directory.`);
 * ```
 */
export class BreakerError extends BaseError {
  /** The class name. */
  override name = "BreakerError";
  /** Why. */
  readonly reason: BreakerErrorReason;

  /** `message`: one sentence naming the thing and what to do. */
  constructor(reason: BreakerErrorReason, message: string, options?: BaseErrorOptions) {
    super(message, options);
    this.reason = reason;
  }
}
