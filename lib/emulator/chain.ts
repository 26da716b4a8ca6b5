/**
 * The node the emulator broadcasts to (`--rpcUrl`): a viem public client
 * with JSON-RPC batching, plus the fee data cache used for `feeLevel`.
 *
 * @module
 */

import { createPublicClient, http, type PublicClient } from "viem";

/** Fees for one fee level, wei. */
export type Fees =
  | { type: "eip1559"; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }
  | { type: "legacy"; gasPrice: bigint };

/** The fee levels of the platform. */
export type FeeLevel = "LOW" | "MEDIUM" | "HIGH";

/**
 * The node.
 *
 * @example
 * ```ts
 * const chain = new Chain("http://127.0.0.1:8545");
 * await chain.client.getChainId();
 * ```
 */
export class Chain {
  /**
   * viem public client (batched).
   *
   * @ignore
   */
  readonly client: PublicClient;
  /** The node's URL. */
  readonly url: string;
  #fees?: { at: number; base: bigint | undefined; tip: bigint; gasPrice: bigint };

  /** A client of the node at `url`. */
  constructor(url: string) {
    this.url = url;
    this.client = createPublicClient({
      transport: http(url, { batch: { batchSize: 200, wait: 0 }, retryCount: 1, timeout: 30_000 }),
    }) as PublicClient;
  }

  /**
   * Fees for `level` from the node's latest block and its suggested tip
   * (cached for one second): LOW = base + tip, MEDIUM = 2·base + tip,
   * HIGH = 3·base + 2·tip; without a base fee, the gas price × 1, 1.1, 1.25.
   */
  async fees(level: FeeLevel): Promise<Fees> {
    const now = Date.now();
    if (!this.#fees || now - this.#fees.at > 1000) {
      const [block, gasPrice] = await Promise.all([
        this.client.getBlock({ blockTag: "latest" }),
        this.client.getGasPrice(),
      ]);
      // a node that cannot suggest a tip: 1 gwei
      const tip = block.baseFeePerGas == null
        ? 0n
        : await this.client.estimateMaxPriorityFeePerGas().catch(() => 1_000_000_000n);
      this.#fees = { at: now, base: block.baseFeePerGas ?? undefined, tip, gasPrice };
    }
    const f = this.#fees;
    if (f.base === undefined) {
      const mul = level === "LOW" ? 100n : level === "MEDIUM" ? 110n : 125n;
      return { type: "legacy", gasPrice: (f.gasPrice * mul) / 100n };
    }
    const [bm, tm] = level === "LOW" ? [1n, 1n] : level === "MEDIUM" ? [2n, 1n] : [3n, 2n];
    const tip = f.tip * tm;
    return { type: "eip1559", maxFeePerGas: f.base * bm + tip, maxPriorityFeePerGas: tip };
  }
}

/**
 * The node of a context that has one. Routes that reach the node are marked
 * `node` and the handler refuses them without one, so reaching this without
 * a node is a bug of the emulator.
 *
 * @example
 * ```ts
 * import type { EmulatorContext } from "./context.ts";
 * declare const ctx: EmulatorContext;
 * const client = nodeOf(ctx).client;
 * ```
 */
export function nodeOf(ctx: { chain?: Chain }): Chain {
  if (!ctx.chain) {
    throw new Error("the emulator runs without a node (--rpcUrl), yet the node was asked");
  }
  return ctx.chain;
}
