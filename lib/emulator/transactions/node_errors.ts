/**
 * What a node's error means for a transaction: the platform's `subStatus`
 * of a FAILED transaction (INSUFFICIENT_FUNDS, INVALID_NONCE,
 * GAS_LIMIT_TOO_LOW, INSUFFICIENT_FEE, SMART_CONTRACT_EXECUTION_FAILED,
 * NETWORK_ERROR, else ERROR_BROADCASTING) and a one-line description.
 *
 * @module
 */

/** A node error as the platform reports it. */
export interface NodeFailure {
  /** The platform's `subStatus`. */
  subStatus: string;
  /** The node's words, first line, at most 300 characters. */
  description: string;
}

/**
 * Maps a node error to the platform's subStatus.
 *
 * @example
 * ```ts
 * classifyNodeError(new Error("nonce too low")).subStatus; // "INVALID_NONCE"
 * ```
 */
export function classifyNodeError(e: unknown): NodeFailure {
  const text = [
    (e as { shortMessage?: string })?.shortMessage,
    (e as { details?: string })?.details,
    (e as Error)?.message,
  ].filter(Boolean).join(" | ");
  const t = text.toLowerCase();
  const description = text.split("\n")[0].slice(0, 300);
  const match = SUB_STATUS_WORDS.find(([, words]) => words.some((w) => t.includes(w)));
  return { subStatus: match?.[0] ?? "ERROR_BROADCASTING", description };
}

/** The sub-status of a node error whose text has one of the words, the first match winning. */
const SUB_STATUS_WORDS: [string, string[]][] = [
  ["INSUFFICIENT_FUNDS", ["insufficient funds", "exceeds the balance"]],
  ["INVALID_NONCE", ["nonce"]],
  ["GAS_LIMIT_TOO_LOW", ["intrinsic gas", "gas too low", "out of gas"]],
  ["INSUFFICIENT_FEE", ["underpriced", "base fee", "fee cap"]],
  ["SMART_CONTRACT_EXECUTION_FAILED", ["revert"]],
  ["NETWORK_ERROR", ["fetch", "http request failed", "connect"]],
];
