/**
 * Which HTTP statuses from the platform are worth a retry. A leaf with no
 * imports (the emulator's idempotency records use it without the client);
 * everything else takes it, with `isRetryable` for thrown errors, from
 * `errors.ts`.
 *
 * @module
 */

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
