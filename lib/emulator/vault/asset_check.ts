/**
 * The one asset check of the vault calls: the emulator's vault holds only its
 * chain's base asset. A leaf (no routes, no context), so the transaction side
 * uses it too.
 *
 * @module
 */

import { NotFoundError } from "../../core/mod.ts";

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
