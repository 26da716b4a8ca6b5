/**
 * Blockchains and assets (`platform-api.md`, "Chain id → asset id"): how
 * `rpc` finds the asset id of a chain that no built-in table knows.
 *
 * @module
 */

import * as z from "zod";
import type { PlatformClient } from "./client.ts";
import { pageSchema, stringOrNumber } from "./schemas.ts";

/** A blockchain as the platform lists it. */
export interface Blockchain {
  /** The platform's id of the chain. */
  id: string;
  /** The older asset-style id. */
  legacyId?: string;
  /** Human name. */
  displayName?: string;
  /** Id of the native asset (look it up for its `legacyId`). */
  nativeAssetId?: string;
  /** On-chain facts; `chainId` for EVM chains. */
  onchain?: {
    protocol?: string;
    chainId?: string | number | null;
    test?: boolean;
    [extra: string]: unknown;
  };
  /** Fields the platform adds. */
  [extra: string]: unknown;
}

const BlockchainSchema = z.looseObject({
  id: z.string(),
  legacyId: z.string().optional(),
  displayName: z.string().optional(),
  nativeAssetId: z.string().optional(),
  onchain: z.looseObject({
    protocol: z.string().optional(),
    chainId: stringOrNumber().nullish(),
    test: z.boolean().optional(),
  }).optional(),
});

/** An asset as `GET /v1/assets/{id}` returns it. */
export interface Asset {
  /** The asset's id. */
  id: string;
  /** The id that vault and transaction calls use (e.g. `ETH_TEST5`). */
  legacyId: string;
  /** Fields the platform adds. */
  [extra: string]: unknown;
}

const AssetSchema: z.ZodType<Asset> = z.looseObject({
  id: z.string(),
  legacyId: z.string(),
});

/** Lists the blockchains of a protocol (default `ETH`, i.e. EVM), following pages. */
export function listBlockchains(
  client: PlatformClient,
  options: { protocol?: string; signal?: AbortSignal } = {},
): AsyncGenerator<Blockchain> {
  return client.paginate("/v1/blockchains", {
    operation: "list blockchains",
    query: { protocol: options.protocol ?? "ETH", pageSize: 500 },
    schema: pageSchema<Blockchain>(BlockchainSchema),
    signal: options.signal,
  });
}

/** Gets one asset by its id. */
export async function getAsset(
  client: PlatformClient,
  assetId: string,
  signal?: AbortSignal,
): Promise<Asset> {
  return (await client.request("GET", `/v1/assets/${encodeURIComponent(assetId)}`, {
    operation: `get asset ${JSON.stringify(assetId)}`,
    schema: AssetSchema,
    signal,
  })).data;
}

/**
 * The asset id (the `legacyId` that vault and transaction calls use) of the
 * native asset of EVM chain `chainId`, or `undefined` when the platform has
 * no such chain.
 *
 * @example
 * ```ts
 * import type { PlatformClient } from "./client.ts";
 * declare const client: PlatformClient;
 * await findNativeAssetId(client, 11155111n); // "ETH_TEST5"
 * ```
 */
export async function findNativeAssetId(
  client: PlatformClient,
  chainId: bigint,
  signal?: AbortSignal,
): Promise<string | undefined> {
  for await (const chain of listBlockchains(client, { signal })) {
    const id = chain.onchain?.chainId;
    if (id === undefined || id === null || String(id) !== chainId.toString()) continue;
    if (!chain.nativeAssetId) return chain.legacyId;
    return (await getAsset(client, chain.nativeAssetId, signal)).legacyId;
  }
  return undefined;
}
