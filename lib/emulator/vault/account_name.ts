/**
 * The name the platform gives a vault account, as the emulator names its
 * accounts. A leaf, so the transaction side uses it without the vault routes.
 *
 * @module
 */

/**
 * The name of vault account `i`.
 *
 * @example
 * ```ts
 * accountName(0); // "Default"
 * accountName(3); // "Account 3"
 * ```
 */
export function accountName(i: number): string {
  return i === 0 ? "Default" : `Account ${i}`;
}
