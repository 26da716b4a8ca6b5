/**
 * The one error base of `service`. Every error class in `lib/` extends
 * {@linkcode BaseError}: a one-line `shortMessage` for people, optional
 * `details` (what a lower layer said), and a `cause` chain that
 * {@linkcode BaseError.walk} follows. The message is the short message as it
 * is, so a subclass decides the exact text users see.
 *
 * The domain errors ({@linkcode BadRequestError}, {@linkcode NotFoundError},
 * {@linkcode ConflictError}) are what engines and checks throw when a request
 * cannot be carried out, without saying how a surface answers it; anything
 * else that escapes is a bug, never "bad request". Mapping errors to an exit
 * code, a JSON-RPC error or an HTTP answer happens in exactly one place per
 * surface (`cli/errors.ts`, `rpc/protocol.ts`, `emulator/http/handler.ts`), by
 * `instanceof`, never by name or message.
 *
 * @module
 */

/** Options of {@linkcode BaseError}. */
export interface BaseErrorOptions {
  /** The error this one wraps. */
  cause?: unknown;
  /** What a lower layer said, for `--verbose` and logs (never a secret). Default: the cause's message. */
  details?: string;
}

/**
 * The base of every error class in `lib/`.
 *
 * @example
 * ```ts
 * class ThingError extends BaseError {
 *   override name = "ThingError";
 * }
 * const e = new ThingError("Cannot read the thing.", { cause: new Error("EACCES") });
 * e.details; // "EACCES"
 * e.walk((c) => c instanceof Error && c.message === "EACCES"); // the cause
 * ```
 */
export class BaseError extends Error {
  /** The class name, set by each subclass. */
  override name = "BaseError";
  /** The one-line message for people (equal to `message`). */
  readonly shortMessage: string;
  /** What a lower layer said, when known. */
  readonly details: string | undefined;

  /** `shortMessage` says what failed, the value, and what to do. */
  constructor(shortMessage: string, options: BaseErrorOptions = {}) {
    super(shortMessage, options.cause === undefined ? undefined : { cause: options.cause });
    this.shortMessage = shortMessage;
    const cause = options.cause;
    this.details = options.details ??
      (cause instanceof Error ? cause.message : cause === undefined ? undefined : String(cause));
  }

  /**
   * Follows the `cause` chain from this error. Without `fn`, returns the
   * deepest error; with `fn`, the first error (this one included) for which
   * it returns true, or `undefined`.
   */
  walk(fn?: (error: unknown) => boolean): unknown {
    return walk(this, fn);
  }
}

/**
 * {@linkcode BaseError.walk} for any value: follows `cause` links (at most 32,
 * so a cycle ends).
 *
 * @example
 * ```ts
 * walk(new Error("outer", { cause: new Error("inner") })); // the inner error
 * ```
 */
export function walk(error: unknown, fn?: (error: unknown) => boolean): unknown {
  let e: unknown = error;
  for (let i = 0; i < 32; i++) {
    if (fn?.(e)) return e;
    const next = e instanceof Error ? e.cause : undefined;
    if (next === undefined) return fn ? undefined : e;
    e = next;
  }
  return fn ? undefined : e;
}

/**
 * The message of any thrown value, for a log line or a wrapping error.
 *
 * @example
 * ```ts
 * messageOf(new Error("boom")); // "boom"
 * messageOf("plain"); // "plain"
 * ```
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

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
