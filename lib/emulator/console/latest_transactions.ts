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

const FEE_KINDS: Record<string, string> = { eip1559: "EIP-1559", legacy: "legacy" };

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
    `SELECT id, status, sub_status AS subStatus, operation, tx_hash AS txHash,
       created_at AS createdAt, json_extract(record, '$.createdBy') AS createdBy,
       json_extract(request, '$.fees.kind') AS kind, json_extract(request, '$.fees.level') AS level
     FROM transactions ORDER BY seq DESC LIMIT ?`,
  ).all(limit) as Row[];
  return rows.map(({ kind, level, ...r }) => ({
    ...r,
    createdAt: Number(r.createdAt),
    fee: kind === "level" ? String(level) : FEE_KINDS[String(kind)] ?? "",
  } as ConsoleTransaction));
}
