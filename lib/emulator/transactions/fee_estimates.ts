/**
 * Fee estimates at the platform's three levels, from the node's fee data
 * (`Chain.fees`: LOW = base + tip, MEDIUM = 2·base + tip, HIGH = 3·base +
 * 2·tip; a chain without a base fee: the gas price × 1, 1.1, 1.25):
 *
 * - `GET /v1/estimate_network_fee?assetId=` → `{low, medium, high}` of the
 *   SDK's `NetworkFee`: `gasPrice` (the max fee per gas), `baseFee` (its
 *   base-fee part), `priorityFee` in gwei, and `networkFee`, the cost of a
 *   plain transfer (21 000 gas) at that price, in ether; all strings.
 * - `POST /v1/transactions/estimate_fee` (a transaction request) → `{low,
 *   medium, high}` of the SDK's `TransactionFee`: the same figures for the
 *   request's gas limit (given, else estimated by the node; a call that
 *   would revert is a 400 saying so). The SDK types `gasPrice`, `baseFee`
 *   and `priorityFee` of this model as numbers (gwei), `gasLimit` and
 *   `networkFee` as strings; we follow the SDK. A TYPED_MESSAGE costs
 *   nothing on chain: every figure is 0.
 *
 * @module
 */

import { requireAsset } from "../vault/identity.ts";
import { formatEther, formatGwei } from "viem";
import { BadRequestError } from "../../core/mod.ts";
import type { TransactionDeps } from "./deps.ts";
import { type FeeLevel, type Fees, nodeOf } from "../chain.ts";
import { checkTransactionRequest } from "./request_check.ts";
import { classifyNodeError } from "./node_errors.ts";

const LEVELS: readonly FeeLevel[] = ["LOW", "MEDIUM", "HIGH"];
const TRANSFER_GAS = 21_000n;

/** One level's figures, wei per gas. */
function perGas(f: Fees): { max: bigint; base: bigint; tip: bigint } {
  return f.type === "eip1559"
    ? {
      max: f.maxFeePerGas,
      base: f.maxFeePerGas - f.maxPriorityFeePerGas,
      tip: f.maxPriorityFeePerGas,
    }
    : { max: f.gasPrice, base: f.gasPrice, tip: 0n };
}

/** Answers a node's error as a 400: `what` could not be done, and the node's reason. */
const answerNodeError = (what: string) => (e: unknown): never => {
  throw new BadRequestError(`${what}: ${classifyNodeError(e).description}`);
};

async function levels<T>(
  ctx: TransactionDeps,
  shape: (g: { max: bigint; base: bigint; tip: bigint }) => T,
): Promise<{ low: T; medium: T; high: T }> {
  const chain = nodeOf(ctx);
  const fees = await Promise.all(LEVELS.map((l) => chain.fees(l)))
    .catch(answerNodeError("Cannot read the fee data from the node"));
  const [low, medium, high] = fees.map((f) => shape(perGas(f)));
  return { low, medium, high };
}

/**
 * The network fee estimate of `assetId` (the chain's base asset).
 *
 * @example
 * ```ts
 * import type { EmulatorContext } from "../context.ts";
 * declare const ctx: EmulatorContext;
 * await estimateNetworkFee(ctx, "ETH_TEST5"); // { low: { gasPrice: "1.5", ... }, ... }
 * ```
 */
export function estimateNetworkFee(
  ctx: TransactionDeps,
  assetId: string | null,
): Promise<Record<"low" | "medium" | "high", Record<string, string>>> {
  if (!assetId) {
    throw new BadRequestError("assetId is required, e.g. ?assetId=" + ctx.config.assetId);
  }
  requireAsset(ctx, assetId);
  return levels(ctx, (g) => ({
    gasPrice: formatGwei(g.max),
    baseFee: formatGwei(g.base),
    priorityFee: formatGwei(g.tip),
    networkFee: formatEther(g.max * TRANSFER_GAS),
  }));
}

/**
 * The fee estimate of a transaction request (as `POST /v1/transactions`
 * takes it; nothing is stored or sent).
 *
 * @example
 * ```ts
 * import type { EmulatorContext } from "../context.ts";
 * declare const ctx: EmulatorContext;
 * const assetId = ctx.config.assetId;
 * const source = { type: "VAULT_ACCOUNT", id: "0" };
 * const destination = { type: "VAULT_ACCOUNT", id: "1" };
 * await estimateTransactionFee(ctx, { operation: "TRANSFER", assetId, source, destination, amount: "0.1" });
 * ```
 */
export async function estimateTransactionFee(
  ctx: TransactionDeps,
  body: unknown,
): Promise<Record<"low" | "medium" | "high", Record<string, string | number>>> {
  const { request } = checkTransactionRequest(ctx, body);
  if (request.kind === "message") {
    const zero = { gasPrice: 0, baseFee: 0, priorityFee: 0, gasLimit: "0", networkFee: "0" };
    return { low: zero, medium: zero, high: zero };
  }
  const gasLimit = request.gasLimit ?? await nodeOf(ctx).client.estimateGas({
    account: ctx.keys.address(request.accountId),
    to: request.to,
    value: request.value,
    data: request.data,
  }).catch(answerNodeError("The node cannot estimate the gas of this transaction"));
  return levels(ctx, (g) => ({
    gasPrice: Number(formatGwei(g.max)),
    baseFee: Number(formatGwei(g.base)),
    priorityFee: Number(formatGwei(g.tip)),
    gasLimit: gasLimit.toString(),
    networkFee: formatEther(g.max * gasLimit),
  }));
}
