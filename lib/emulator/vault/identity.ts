/**
 * What names a vault account and its asset: an account's name as the
 * platform gives it, and the one asset the emulator's vault holds (its
 * chain's base asset). A leaf (no routes, no context), so the transaction
 * side uses it without the vault routes.
 *
 * @module
 */

import { NotFoundError } from "../../core/mod.ts";

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

/**
 * Throws a NotFoundError unless `assetId` is the chain's base asset.
 *
 * @example
 * ```ts
 * requireAsset({ config: { chainId: 31337, assetId: "ETH_TEST_31337" } }, "ETH_TEST_31337"); // ok
 * ```
 */
export function requireAsset(
  ctx: { readonly config: { readonly chainId: number; readonly assetId: string } },
  assetId: string,
): void {
  if (assetId !== ctx.config.assetId) {
    throw new NotFoundError(
      `Asset "${assetId}" is not in this vault: the emulator's chain ${ctx.config.chainId} has asset ${ctx.config.assetId}.`,
    );
  }
}
