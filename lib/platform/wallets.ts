/**
 * Whitelisted wallets (external, internal, contract) and their addresses:
 * what the bridge resolves destinations against when one-time addresses are
 * off (`--oneTimeAddressesEnabled false`), as the platform's web3 provider
 * does.
 *
 * @module
 */

import * as z from "zod";
import type { PlatformClient } from "./client.ts";

/** The kinds of whitelisted wallet, as a transaction's destination type names them. */
export type WhitelistedWalletType = "EXTERNAL_WALLET" | "INTERNAL_WALLET" | "CONTRACT";

/** One whitelisted wallet's address of one asset. */
export interface WhitelistedAddress {
  /** The destination type. */
  type: WhitelistedWalletType;
  /** The wallet's id. */
  id: string;
  /** The wallet's name. */
  name: string;
  /** The asset's address in it. */
  address: string;
}

const WalletList: z.ZodType<
  { id: string; name?: string; assets?: { id: string; address?: string }[] }[]
> = z.array(
  z.looseObject({
    id: z.string(),
    name: z.string().optional(),
    assets: z.array(z.looseObject({ id: z.string(), address: z.string().optional() })).optional(),
  }),
);

const LISTS: [WhitelistedWalletType, string, string][] = [
  ["EXTERNAL_WALLET", "/v1/external_wallets", "list external wallets"],
  ["INTERNAL_WALLET", "/v1/internal_wallets", "list internal wallets"],
  ["CONTRACT", "/v1/contracts", "list contract wallets"],
];

/**
 * Every whitelisted address of `assetId`, from the three wallet lists.
 *
 * @example
 * ```ts
 * import type { PlatformClient } from "./client.ts";
 * declare const client: PlatformClient;
 * const known = await listWhitelistedAddresses(client, "ETH_TEST5");
 * ```
 */
export async function listWhitelistedAddresses(
  client: PlatformClient,
  assetId: string,
  signal?: AbortSignal,
): Promise<WhitelistedAddress[]> {
  const lists = await Promise.all(LISTS.map(async ([type, path, operation]) => {
    const { data } = await client.request("GET", path, { operation, schema: WalletList, signal });
    return data.flatMap((w) =>
      (w.assets ?? []).filter((a) => a.id === assetId && a.address).map((a) => ({
        type,
        id: w.id,
        name: w.name ?? "",
        address: a.address!,
      }))
    );
  }));
  return lists.flat();
}
