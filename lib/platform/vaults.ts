/**
 * Vault accounts and their deposit addresses (`platform-api.md`, "Vault
 * accounts and addresses"): what `rpc` exposes as `eth_accounts`.
 *
 * @module
 */

import * as z from "zod";
import type { PlatformClient } from "./client.ts";

const seg = encodeURIComponent;

/** A vault account as listed by `accounts_paged`. */
export interface VaultAccount {
  /** The account's id, e.g. `"0"`. */
  id: string;
  /** Its name. */
  name?: string;
  /** The assets it holds. */
  assets?: { id: string; [extra: string]: unknown }[];
  /** Fields the platform adds. */
  [extra: string]: unknown;
}

const VaultAccountSchema = z.looseObject({
  id: z.string(),
  name: z.string().optional(),
  assets: z.array(z.looseObject({ id: z.string() })).optional(),
});

const VaultAccountsPage: z.ZodType<{
  accounts: VaultAccount[];
  paging?: { before?: string | null; after?: string | null } | null;
}> = z.looseObject({
  accounts: z.array(VaultAccountSchema),
  paging: z.looseObject({ before: z.string().nullish(), after: z.string().nullish() }).nullish(),
});

/** One deposit address of a vault account's asset. */
export interface VaultAddress {
  /** The asset id. */
  assetId?: string;
  /** The address (for EVM assets: the account's 0x address). */
  address: string;
  /** Fields the platform adds. */
  [extra: string]: unknown;
}

const AddressesPage: z.ZodType<{ addresses: VaultAddress[] }> = z.looseObject({
  addresses: z.array(z.looseObject({ assetId: z.string().optional(), address: z.string() })),
  paging: z.looseObject({ before: z.string().nullish(), after: z.string().nullish() }).nullish(),
});

/**
 * Lists the vault accounts (optionally only those holding `assetId`),
 * following `paging.after` to the end.
 *
 * @example
 * ```ts
 * import type { PlatformClient } from "./client.ts";
 * declare const client: PlatformClient;
 * for await (const a of listVaultAccounts(client, { assetId: "ETH_TEST5" })) console.log(a.id);
 * ```
 */
export async function* listVaultAccounts(
  client: PlatformClient,
  options: { assetId?: string; limit?: number; signal?: AbortSignal } = {},
): AsyncGenerator<VaultAccount> {
  let after: string | undefined;
  for (;;) {
    const { data } = await client.request("GET", "/v1/vault/accounts_paged", {
      operation: "list vault accounts",
      query: { assetId: options.assetId, limit: options.limit ?? 200, orderBy: "ASC", after },
      schema: VaultAccountsPage,
      signal: options.signal,
    });
    for (const a of data.accounts) yield a;
    const next = data.paging?.after;
    if (!next || data.accounts.length === 0) return;
    after = next;
  }
}

/**
 * The first deposit address of `assetId` in vault account `vaultAccountId`
 * (for EVM assets: the account's address), or `undefined` when it has none.
 */
export async function getFirstAddress(
  client: PlatformClient,
  vaultAccountId: string,
  assetId: string,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const path = `/v1/vault/accounts/${seg(vaultAccountId)}/${seg(assetId)}/addresses_paginated`;
  const { data } = await client.request("GET", path, {
    operation: `get the ${assetId} address of vault account ${JSON.stringify(vaultAccountId)}`,
    query: { limit: 1 },
    schema: AddressesPage,
    signal,
  });
  return data.addresses[0]?.address;
}
