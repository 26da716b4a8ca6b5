/**
 * The errors of the delivery-log reader and of the replay: a
 * {@linkcode DeliveryLogError} carries a literal {@linkcode DeliveryLogReason}
 * that the command maps to its message and exit code (by `instanceof` and
 * `reason`, never by the message); an {@linkcode InvalidLineError} also names
 * the line and the field at fault.
 *
 * @module
 */

import { BaseError, type BaseErrorOptions } from "../../core/mod.ts";

/**
 * Why a delivery log cannot be used:
 *
 * - `invalid-line`: a line is not valid JSON, not a known CSV shape, or a
 *   field breaks the rules of breaker.md §4 (an {@linkcode InvalidLineError});
 * - `out-of-order`: a webhook's line is earlier than its previous one (an
 *   {@linkcode InvalidLineError}; `--sort` is the fix, not the line);
 * - `corrupt-gzip`: the input starts with the gzip magic bytes but does not
 *   decompress (`details` says what the decompressor said);
 * - `gzip-trailing-data`: complete gzip data is followed by bytes that are
 *   neither another gzip member nor zero padding (refused: see `gzip.ts`);
 * - `line-too-long`: a line (after decompression) is longer than the reader's
 *   line limit (`MAX_LINE_BYTES` of `delivery_log.ts`, 1 MiB).
 */
export type DeliveryLogReason =
  | "invalid-line"
  | "out-of-order"
  | "corrupt-gzip"
  | "gzip-trailing-data"
  | "line-too-long";

/**
 * A delivery log that cannot be read to the end.
 *
 * @example
 * ```ts
 * const e = new DeliveryLogError("corrupt-gzip", "The log does not decompress.", {
 *   cause: new TypeError("corrupt deflate stream"),
 * });
 * e.reason; // "corrupt-gzip"
 * e.details; // "corrupt deflate stream"
 * ```
 */
export class DeliveryLogError extends BaseError {
  /** `DeliveryLogError`. */
  override name = "DeliveryLogError";
  /** What went wrong, for the command to map. */
  readonly reason: DeliveryLogReason;

  /** An error for `reason`, with a one-line message for people. */
  constructor(reason: DeliveryLogReason, message: string, options: BaseErrorOptions = {}) {
    super(message, options);
    this.reason = reason;
  }
}

/**
 * A line that cannot be used: names the line and the field. The message
 * starts with `line N: `.
 *
 * @example
 * ```ts
 * const e = new InvalidLineError(2, "responseCode", "responseCode 99 is not an HTTP status (100 to 599)");
 * e.message; // "line 2: responseCode 99 is not an HTTP status (100 to 599)"
 * e.reason; // "invalid-line"
 * ```
 */
export class InvalidLineError extends DeliveryLogError {
  /** `InvalidLineError`. */
  override name = "InvalidLineError";
  /** 1-based line number. */
  readonly line: number;
  /** The field at fault, or `"line"` when the line as a whole is bad. */
  readonly field: string;
  /** `invalid-line`, or `out-of-order` for a line earlier than its webhook's previous one. */
  declare readonly reason: "invalid-line" | "out-of-order";

  /** An error for `line`, blaming `field` (`reason` defaults to `invalid-line`). */
  constructor(
    line: number,
    field: string,
    message: string,
    reason: "invalid-line" | "out-of-order" = "invalid-line",
  ) {
    super(reason, `line ${line}: ${message}`);
    this.line = line;
    this.field = field;
  }
}
