/**
 * How an `eth_sendTransaction` object becomes a platform transaction request:
 * TRANSFER when there is no call data, else CONTRACT_CALL; a contract
 * creation when `to` is absent or null; `input` accepted as `data`; `value`
 * in ether, EIP-1559 fees as `maxFee`/`priorityFee` and a legacy `gasPrice`
 * as `fee` (gwei strings), else fee level MEDIUM; `gas` as `gasLimit`. The
 * caller's `chainId` must be this chain's; `nonce` is validated here and
 * checked against the chain by the signer, never forwarded (custody assigns
 * nonces). Quantities convert exactly (bigint only) between JSON-RPC hex wei
 * and the platform's decimal strings (ether for amounts, gwei for fees).
 *
 * @module
 */

import type { TransactionRequest } from "../platform/mod.ts";
import { ADDRESS, RpcError, RpcErrorCode } from "./protocol.ts";
import { BadRequestError } from "../core/mod.ts";

/** A request whose destination is a one-time address (`0x0` for a contract creation). */
export type OneTimeRequest = TransactionRequest & {
  destination: { type: "ONE_TIME_ADDRESS"; oneTimeAddress: { address: string } };
};

/**
 * Maps a JSON-RPC transaction to a platform request (without `source` and
 * `externalTxId`, which the signer adds). Throws {@linkcode RpcError}
 * -32602 for a malformed field.
 *
 * @example
 * ```ts
 * toTransactionRequest({ from: "0x…", to: "0x…", value: "0x14d1120d7b160000" },
 *   { assetId: "ETH_TEST5", chainId: 11155111n }).amount; // "1.5"
 * ```
 */
export function toTransactionRequest(
  tx: Record<string, unknown>,
  options: {
    assetId: string;
    chainId: bigint;
    note?: string;
    /** The fee level when `tx` carries no fee field; default MEDIUM. */
    feeLevel?: "LOW" | "MEDIUM" | "HIGH";
  },
): OneTimeRequest {
  const bad = (m: string): never => {
    throw new RpcError(RpcErrorCode.invalidParams, `eth_sendTransaction: ${m}`);
  };
  const q = (name: string): bigint | undefined => {
    const v = tx[name];
    if (v === undefined || v === null) return undefined;
    try {
      return parseQuantity(v, name);
    } catch (e) {
      return bad((e as Error).message);
    }
  };
  const chainId = q("chainId");
  if (chainId !== undefined && chainId !== options.chainId) {
    bad(`chainId ${chainId} is not this bridge's chain ${options.chainId}.`);
  }
  q("nonce");
  const to = tx.to;
  if (to !== undefined && to !== null && (typeof to !== "string" || !ADDRESS.test(to))) {
    bad('"to" must be an address, or absent/null to create a contract.');
  }
  const dataRaw = tx.data ?? tx.input;
  if (tx.data != null && tx.input != null && tx.data !== tx.input) {
    bad('"data" and "input" differ; send one of them.');
  }
  let data = "0x";
  if (dataRaw !== undefined && dataRaw !== null) {
    if (typeof dataRaw !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(dataRaw)) {
      bad('"data"/"input" must be 0x-prefixed hex bytes.');
    }
    data = dataRaw as string;
  }
  const value = q("value") ?? 0n;
  const gas = q("gas") ?? q("gasLimit");
  const maxFee = q("maxFeePerGas");
  const priority = q("maxPriorityFeePerGas");
  const gasPrice = q("gasPrice");
  const creation = to === undefined || to === null;
  if (creation && data === "0x") bad('a contract creation (no "to") needs init code in data.');
  const body: OneTimeRequest = {
    operation: !creation && data === "0x" ? "TRANSFER" : "CONTRACT_CALL",
    assetId: options.assetId,
    source: { type: "VAULT_ACCOUNT", id: "" },
    destination: {
      type: "ONE_TIME_ADDRESS",
      oneTimeAddress: { address: creation ? "0x0" : to as string },
    },
    amount: formatUnits(value, 18),
  };
  if (data !== "0x") body.extraParameters = { contractCallData: data };
  if (gas !== undefined) body.gasLimit = gas.toString();
  if (maxFee !== undefined || priority !== undefined) {
    if (maxFee !== undefined) body.maxFee = formatUnits(maxFee, 9);
    if (priority !== undefined) body.priorityFee = formatUnits(priority, 9);
  } else if (gasPrice !== undefined) body.fee = formatUnits(gasPrice, 9);
  else body.feeLevel = options.feeLevel ?? "MEDIUM";
  if (options.note) body.note = options.note;
  return body;
}

/**
 * Parses a JSON-RPC quantity (`0x`-hex, or a decimal string/number as some
 * clients send) into a bigint. Throws `BadRequestError` when it is not one.
 */
export function parseQuantity(value: unknown, name: string): bigint {
  if (typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) {
    return BigInt(value);
  }
  if (typeof value === "string") {
    if (/^0x[0-9a-fA-F]+$/.test(value)) return BigInt(value);
    if (/^\d+$/.test(value)) return BigInt(value);
  }
  throw new BadRequestError(
    `${name} must be a hex quantity such as 0x1 (got ${JSON.stringify(value)})`,
  );
}

/**
 * Formats `value` with `decimals` decimals, without trailing zeros.
 *
 * @example
 * ```ts
 * formatUnits(1500000000000000000n, 18); // "1.5"
 * formatUnits(2000000000n, 9); // "2"
 * ```
 */
export function formatUnits(value: bigint, decimals: number): string {
  const negative = value < 0n;
  const v = negative ? -value : value;
  const base = 10n ** BigInt(decimals);
  const whole = v / base;
  const frac = (v % base).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${frac ? "." + frac : ""}`;
}
