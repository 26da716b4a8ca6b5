/**
 * The built-in chain table: chain id → the platform's native asset id and a
 * public node. Chains missing here still work: the bridge then asks the
 * platform (`findNativeAssetId`) and needs `--rpcUrl`.
 *
 * @module
 */

/** A known chain. */
export interface KnownChain {
  /** The platform's asset id of the chain's native coin. */
  assetId: string;
  /** A public node used when `--rpcUrl` is not given. */
  rpcUrl: string;
}

/** Built-in chains by decimal chain id. */
export const KNOWN_CHAINS: Readonly<Record<string, KnownChain>> = {
  "1": { assetId: "ETH", rpcUrl: "https://ethereum-rpc.publicnode.com" },
  "11155111": { assetId: "ETH_TEST5", rpcUrl: "https://ethereum-sepolia-rpc.publicnode.com" },
  "17000": { assetId: "ETH_TEST6", rpcUrl: "https://ethereum-holesky-rpc.publicnode.com" },
  "560048": { assetId: "ETH_TEST_HOODI", rpcUrl: "https://ethereum-hoodi-rpc.publicnode.com" },
  "56": { assetId: "BNB_BSC", rpcUrl: "https://bsc-dataseed.binance.org" },
  "97": { assetId: "BNB_TEST", rpcUrl: "https://data-seed-prebsc-1-s1.binance.org:8545" },
  "137": { assetId: "MATIC_POLYGON", rpcUrl: "https://polygon-rpc.com" },
  "80002": { assetId: "AMOY_POLYGON_TEST", rpcUrl: "https://rpc-amoy.polygon.technology" },
  "43114": { assetId: "AVAX", rpcUrl: "https://api.avax.network/ext/bc/C/rpc" },
  "43113": { assetId: "AVAXTEST", rpcUrl: "https://api.avax-test.network/ext/bc/C/rpc" },
  "42161": { assetId: "ETH-AETH", rpcUrl: "https://arb1.arbitrum.io/rpc" },
  "421614": { assetId: "ETH-AETH_SEPOLIA", rpcUrl: "https://sepolia-rollup.arbitrum.io/rpc" },
  "10": { assetId: "ETH-OPT", rpcUrl: "https://mainnet.optimism.io" },
  "11155420": { assetId: "ETH-OPT_SEPOLIA", rpcUrl: "https://sepolia.optimism.io" },
  "8453": { assetId: "BASECHAIN_ETH", rpcUrl: "https://mainnet.base.org" },
  "84532": { assetId: "BASECHAIN_ETH_TEST5", rpcUrl: "https://sepolia.base.org" },
  "59144": { assetId: "LINEA", rpcUrl: "https://rpc.linea.build" },
  "100": { assetId: "XDAI", rpcUrl: "https://rpc.gnosischain.com" },
  "42220": { assetId: "CELO", rpcUrl: "https://forno.celo.org" },
};

/** The built-in entry of a chain, if any. */
export function knownChain(chainId: bigint): KnownChain | undefined {
  const key = chainId.toString();
  return Object.hasOwn(KNOWN_CHAINS, key) ? KNOWN_CHAINS[key] : undefined;
}
