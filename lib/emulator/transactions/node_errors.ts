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
  if (t.includes("insufficient funds") || t.includes("exceeds the balance")) {
    return { subStatus: "INSUFFICIENT_FUNDS", description };
  }
  if (t.includes("nonce")) return { subStatus: "INVALID_NONCE", description };
  if (t.includes("intrinsic gas") || t.includes("gas too low") || t.includes("out of gas")) {
    return { subStatus: "GAS_LIMIT_TOO_LOW", description };
  }
  if (t.includes("underpriced") || t.includes("base fee") || t.includes("fee cap")) {
    return { subStatus: "INSUFFICIENT_FEE", description };
  }
  if (t.includes("revert")) return { subStatus: "SMART_CONTRACT_EXECUTION_FAILED", description };
  if (t.includes("fetch") || t.includes("http request failed") || t.includes("connect")) {
    return { subStatus: "NETWORK_ERROR", description };
  }
  return { subStatus: "ERROR_BROADCASTING", description };
}
