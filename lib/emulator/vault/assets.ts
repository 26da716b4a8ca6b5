/**
 * Chains and assets: the base asset id of the node's chain, and the
 * platform's own lookup endpoints `GET /v1/blockchains` (find the entry whose
 * `onchain.chainId` is the chain id) and `GET /v1/assets/{id}` (its
 * `legacyId` is the asset id vault and transaction calls use).
 *
 * Built-in table: 1 → ETH, 11155111 → ETH_TEST5, 17000 → ETH_TEST6,
 * 560048 → ETH_TEST_HOODI (the ids the platform uses). Any other chain,
 * anvil's 31337 included, gets `ETH_TEST_<chainId>`.
 *
 * @module
 */

import { NotFoundError } from "../../core/mod.ts";
import { intParam } from "../http/params.ts";
import { json, type Reply } from "../http/reply.ts";
import { cursorInt, encodeCursor } from "../http/cursor.ts";
import { route, type RouteModule } from "../http/router.ts";
import type { EmulatorContext } from "../context.ts";

/** One EVM chain the emulator knows. */
export interface ChainInfo {
  /** The EVM chain id. */
  chainId: number;
  /** The asset id of its base asset (e.g. `ETH_TEST5`). */
  assetId: string;
  /** Human-readable name. */
  displayName: string;
  /** Whether it is a test network. */
  test: boolean;
}

/** The built-in chains. */
export const KNOWN_CHAINS: readonly ChainInfo[] = [
  { chainId: 1, assetId: "ETH", displayName: "Ethereum", test: false },
  { chainId: 11155111, assetId: "ETH_TEST5", displayName: "Ethereum Sepolia", test: true },
  { chainId: 17000, assetId: "ETH_TEST6", displayName: "Ethereum Holesky", test: true },
  { chainId: 560048, assetId: "ETH_TEST_HOODI", displayName: "Ethereum Hoodi", test: true },
];

/**
 * The chain info of `chainId`: from the table, else `ETH_TEST_<chainId>`.
 *
 * @example
 * ```ts
 * chainInfo(31337).assetId; // "ETH_TEST_31337"
 * ```
 */
export function chainInfo(chainId: number): ChainInfo {
  return KNOWN_CHAINS.find((c) => c.chainId === chainId) ?? {
    chainId,
    assetId: `ETH_TEST_${chainId}`,
    displayName: `EVM chain ${chainId} (emulated)`,
    test: true,
  };
}

/** Stable UUID-shaped id derived from a chain id and a kind digit. */
function uuidFor(kind: number, chainId: number): string {
  const hex = chainId.toString(16).padStart(12, "0").slice(-12);
  return `00000000-0000-4000-800${kind}-${hex}`;
}

/** The chains served: the table plus the node's chain. */
function chains(ctx: EmulatorContext): ChainInfo[] {
  const list = [...KNOWN_CHAINS];
  if (!list.some((c) => c.chainId === ctx.config.chainId)) list.push(chainInfo(ctx.config.chainId));
  return list;
}

function blockchain(c: ChainInfo) {
  return {
    id: uuidFor(1, c.chainId),
    legacyId: c.assetId,
    displayName: c.displayName,
    nativeAssetId: uuidFor(2, c.chainId),
    onchain: {
      protocol: "ETH",
      chainId: String(c.chainId),
      test: c.test,
      signingAlgo: "ECDSA_SECP256K1",
    },
    metadata: { scope: "GLOBAL", deprecated: false },
  };
}

function asset(c: ChainInfo) {
  return {
    id: uuidFor(2, c.chainId),
    legacyId: c.assetId,
    blockchainId: uuidFor(1, c.chainId),
    displayName: c.displayName,
    displaySymbol: "ETH",
    assetClass: "NATIVE",
    onchain: { symbol: "ETH", name: "Ether", decimals: 18 },
    metadata: { scope: "GLOBAL", verified: true, deprecated: false },
  };
}

/** The page of `list` that `pageSize` and `pageCursor` ask for, as `{data, next}`. */
function pageOf(q: URLSearchParams, list: ChainInfo[], view: (c: ChainInfo) => unknown): Reply {
  const size = intParam(q, "pageSize", 500, 1, 1000);
  const cursor = q.get("pageCursor");
  const start = cursor ? cursorInt("pageCursor", cursor, "start") : 0;
  const next = start + size < list.length ? encodeCursor({ start: start + size }) : null;
  return json(200, { data: list.slice(start, start + size).map(view), next });
}

/** Whether `id` is chain `c`'s blockchain (`kind` 1) or asset (`kind` 2) id, or its asset id. */
function isChain(c: ChainInfo, kind: 1 | 2, id: string): boolean {
  return uuidFor(kind, c.chainId) === id || c.assetId === id;
}

/** The routes of chains and assets. */
export const assetRoutes: RouteModule = {
  name: "assets",
  routes: [
    route("GET", "/v1/blockchains", "api", (req, ctx) => {
      const q = req.query;
      let list = chains(ctx);
      const protocol = q.get("protocol");
      if (protocol && protocol.toUpperCase() !== "ETH") list = [];
      const test = q.get("test");
      if (test === "true" || test === "false") list = list.filter((c) => String(c.test) === test);
      const ids = q.getAll("ids");
      if (ids.length) list = list.filter((c) => ids.some((id) => isChain(c, 1, id)));
      return pageOf(q, list, blockchain);
    }),
    route("GET", "/v1/blockchains/:id", "api", (req, ctx) => {
      const c = chains(ctx).find((x) => isChain(x, 1, req.params.id));
      if (!c) throw new NotFoundError(`Blockchain "${req.params.id}" not found.`);
      return json(200, blockchain(c));
    }),
    route("GET", "/v1/assets", "api", (req, ctx) => {
      const q = req.query;
      let list = chains(ctx);
      const blockchainId = q.get("blockchainId");
      if (blockchainId) list = list.filter((c) => uuidFor(1, c.chainId) === blockchainId);
      const assetClass = q.get("assetClass");
      if (assetClass && assetClass !== "NATIVE") list = [];
      const symbol = q.get("symbol");
      if (symbol && symbol !== "ETH") list = [];
      const ids = q.getAll("ids").flatMap((v) => v.split(",")).filter(Boolean);
      if (ids.length) list = list.filter((c) => ids.some((id) => isChain(c, 2, id)));
      return pageOf(q, list, asset);
    }),
    // the older listing (both SDKs' getSupportedAssets): AssetTypeResponse[]
    route("GET", "/v1/supported_assets", "api", (_req, ctx) =>
      json(
        200,
        chains(ctx).map((c) => ({
          id: c.assetId,
          name: c.displayName,
          type: "BASE_ASSET",
          contractAddress: "",
          nativeAsset: c.assetId,
          decimals: 18,
        })),
      )),
    route("GET", "/v1/assets/:id", "api", (req, ctx) => {
      const c = chains(ctx).find((x) => isChain(x, 2, req.params.id));
      if (!c) throw new NotFoundError(`Asset "${req.params.id}" not found.`);
      return json(200, asset(c));
    }),
  ],
};
