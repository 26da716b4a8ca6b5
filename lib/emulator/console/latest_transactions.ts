/**
 * The console's one read of the transactions table: the latest transactions,
 * newest first (the console page shows them; it writes nothing).
 *
 * @module
 */

import type { Row, Store } from "../store.ts";

/** A transaction as the console lists it. */
export interface ConsoleTransaction {
  /** Transaction id. */
  id: unknown;
  /** Its status. */
  status: unknown;
  /** Its sub-status, if any. */
  subStatus: unknown;
  /** e.g. `TRANSFER`. */
  operation: unknown;
  /** The chain hash, once sent. */
  txHash: unknown;
  /** Epoch ms. */
  createdAt: number;
  /** The id of the API user who created it. */
  createdBy: unknown;
  /**
   * The fee asked for (kept in the checked request: the SDK's response model
   * has no field for it): `LOW`, `MEDIUM` or `HIGH`, `EIP-1559` or `legacy`
   * for explicit fees, `""` for a message.
   */
  fee: string;
}

/**
 * The `limit` latest transactions; throws when the transactions table does
 * not exist (the transactions area is not loaded).
 *
 * @example
 * ```ts
 * import type { EmulatorContext } from "../context.ts";
 * declare const ctx: EmulatorContext;
 * const rows = latestTransactions(ctx.store, 50);
 * ```
 */
export function latestTransactions(store: Store, limit: number): ConsoleTransaction[] {
  const rows = store.db.prepare(
    "SELECT id, status, sub_status, operation, tx_hash, created_at, json_extract(record, '$.createdBy') AS created_by, json_extract(request, '$.fees.kind') AS fee_kind, json_extract(request, '$.fees.level') AS fee_level FROM transactions ORDER BY seq DESC LIMIT ?",
  ).all(limit) as Row[];
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    subStatus: r.sub_status,
    operation: r.operation,
    txHash: r.tx_hash,
    createdAt: Number(r.created_at),
    createdBy: r.created_by,
    fee: r.fee_kind === "level"
      ? String(r.fee_level)
      : r.fee_kind === "eip1559"
      ? "EIP-1559"
      : r.fee_kind === "legacy"
      ? "legacy"
      : "",
  }));
}
