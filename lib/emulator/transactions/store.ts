/**
 * Where transactions are kept: the `transactions` table and every query on
 * it. The only file of the transactions room with SQL. A row keeps the
 * record as the API returns it (JSON), the checked request (to sign after a
 * restart), and the signed raw transaction with its nonce (to send again
 * after a restart).
 *
 * @module
 */

import type { StatementSync } from "node:sqlite";
import type { Hex } from "viem";
import { TRANSACTION_FINAL_STATUSES } from "../../core/mod.ts";
import { type Row, type Store, withTransaction } from "../store.ts";
import type { CheckedRequest } from "./request_check.ts";
import type { EmulatorTransactionStatus } from "./status.ts";
import type { PagePosition, TransactionFilter } from "./list_query.ts";

/** Schema of the transactions table. */
export const TRANSACTIONS_SCHEMA = `
CREATE TABLE IF NOT EXISTS transactions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  external_tx_id TEXT UNIQUE,
  status TEXT NOT NULL,
  sub_status TEXT NOT NULL DEFAULT '',
  operation TEXT NOT NULL,
  account_id INTEGER NOT NULL,
  tx_hash TEXT,
  raw_tx TEXT,
  nonce INTEGER,
  request TEXT NOT NULL,
  record TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS transactions_status ON transactions (status);
`;

/** A transaction as the API returns it. */
export type TransactionRecord = Record<string, unknown> & {
  id: string;
  status: EmulatorTransactionStatus;
  subStatus: string;
  txHash: string;
};

/** What the engine needs of a stored transaction besides its record. */
export interface StoredTransaction {
  /** The record as the API returns it. */
  record: TransactionRecord;
  /** The checked request it was created from. */
  request: CheckedRequest;
  /** The signed raw transaction, once signed (cleared when signed again). */
  raw: Hex | null;
  /** The nonce of `raw`. */
  nonce: number | null;
}

/** The signed bytes kept with a transaction: `raw` and its `nonce`. */
export interface SignedBytes {
  /** The raw transaction (`null`: none). */
  raw: string | null;
  /** Its nonce (`null`: none). */
  nonce: number | null;
}

// bigints of a checked request are stored as "<digits>n"
function encodeRequest(request: CheckedRequest): string {
  return JSON.stringify(request, (_k, v) => typeof v === "bigint" ? `${v}n` : v);
}

function decodeRequest(text: string): CheckedRequest {
  return JSON.parse(
    text,
    (_k, v) => typeof v === "string" && /^\d+n$/.test(v) ? BigInt(v.slice(0, -1)) : v,
  );
}

/**
 * Rewrites the records kept by an emulator before answers held only what the
 * SDK's models declare (a state file of an older version), once: the fields
 * no model declares are removed, and a hash the chain never had (a
 * BROADCASTING transaction's, or a FAILED one's that was never mined) is
 * cleared; BROADCASTING rows are sent again at start and get theirs then.
 */
function upgradeRecords(store: Store): void {
  if (store.getMeta("transactions_records") === "2") return;
  withTransaction(store.db, () => {
    store.db.exec(`
      UPDATE transactions SET record = json_remove(record, '$.feeLevel', '$.maxFee',
        '$.priorityFee', '$.gasPrice', '$.contractAddress', '$.destination.oneTimeAddress');
      UPDATE transactions SET record = json_set(record, '$.txHash', ''), tx_hash = NULL
        WHERE status = 'BROADCASTING'
          OR (status = 'FAILED' AND json_extract(record, '$.blockInfo.blockHash') IS NULL);
    `);
    store.setMeta("transactions_records", "2");
  });
}

const FINAL_LIST = TRANSACTION_FINAL_STATUSES.map((s) => `'${s}'`).join(",");

/**
 * The transactions table of one emulator store. Creates the table when
 * missing.
 *
 * @example
 * ```ts
 * import { Store } from "../store.ts";
 * const store = Store.open();
 * const transactions = new TransactionStore(store);
 * transactions.recordJson("6f1c…"); // the stored JSON, or undefined
 * ```
 */
export class TransactionStore {
  readonly #store: Store;
  readonly #stmts: Record<
    "insert" | "byId" | "byExternal" | "update" | "unfinished",
    StatementSync
  >;

  /** Prepares the queries on `store` (creating the table first). */
  constructor(store: Store) {
    this.#store = store;
    store.db.exec(TRANSACTIONS_SCHEMA);
    upgradeRecords(store);
    const db = store.db;
    this.#stmts = {
      insert: db.prepare(
        `INSERT INTO transactions (id, external_tx_id, status, sub_status, operation, account_id, request, record, created_at, updated_at)
         VALUES (?, ?, ?, '', ?, ?, ?, ?, ?, ?)`,
      ),
      byId: db.prepare("SELECT * FROM transactions WHERE id = ?"),
      byExternal: db.prepare("SELECT * FROM transactions WHERE external_tx_id = ?"),
      update: db.prepare(
        `UPDATE transactions SET status = ?, sub_status = ?, tx_hash = ?, raw_tx = ?, nonce = ?, record = ?, updated_at = ?
         WHERE id = ?`,
      ),
      unfinished: db.prepare(
        `SELECT id FROM transactions WHERE status NOT IN (${FINAL_LIST}) ORDER BY seq`,
      ),
    };
  }

  /** The transaction `id` with its request and signed bytes, or `undefined`. */
  find(id: string): StoredTransaction | undefined {
    const r = this.#stmts.byId.get(id) as Row | undefined;
    if (!r) return undefined;
    return {
      record: JSON.parse(String(r.record)),
      request: decodeRequest(String(r.request)),
      raw: (r.raw_tx as Hex | null) ?? null,
      nonce: (r.nonce as number | null) ?? null,
    };
  }

  /** The transaction `id` as the API returns it, or `undefined`. */
  record(id: string): TransactionRecord | undefined {
    const json = this.recordJson(id);
    return json === undefined ? undefined : JSON.parse(json);
  }

  /** The transaction `id` as stored JSON text (no parse), or `undefined`. */
  recordJson(id: string): string | undefined {
    const r = this.#stmts.byId.get(id) as Row | undefined;
    return r ? String(r.record) : undefined;
  }

  /** The (first) transaction with this `externalTxId`, or `undefined`. */
  byExternalId(externalTxId: string): TransactionRecord | undefined {
    const r = this.#stmts.byExternal.get(externalTxId) as Row | undefined;
    return r ? JSON.parse(String(r.record)) : undefined;
  }

  /**
   * One page of a listing: up to `filter.limit` records in the filter's
   * order, the first page or the rows after (`next`) or before (`prev`) a
   * position; `more` says whether rows lie beyond the page in the
   * direction read, `edges` gives the positions of its first and last rows.
   */
  page(
    filter: TransactionFilter,
    page?: { direction: "next" | "prev"; at: PagePosition },
  ): { records: TransactionRecord[]; more: boolean; edges?: [PagePosition, PagePosition] } {
    const where: string[] = [];
    const args: (string | number)[] = [];
    const add = (sql: string, ...values: (string | number)[]) => {
      where.push(sql);
      args.push(...values);
    };
    if (filter.statuses.length) {
      add(`status IN (${filter.statuses.map(() => "?").join(",")})`, ...filter.statuses);
    }
    if (filter.sourceType) add("json_extract(record, '$.source.type') = ?", filter.sourceType);
    if (filter.sourceId) add("json_extract(record, '$.source.id') = ?", filter.sourceId);
    if (filter.destType) add("json_extract(record, '$.destination.type') = ?", filter.destType);
    if (filter.destId) add("json_extract(record, '$.destination.id') = ?", filter.destId);
    if (filter.assets.length) {
      add(
        `json_extract(record, '$.assetId') IN (${filter.assets.map(() => "?").join(",")})`,
        ...filter.assets,
      );
    }
    if (filter.txHash) add("lower(tx_hash) = lower(?)", filter.txHash);
    if (filter.before !== undefined) add("created_at < ?", filter.before);
    if (filter.after !== undefined) add("created_at > ?", filter.after);
    if (filter.endUserWallet) where.push("0");
    const col = filter.orderBy === "lastUpdated" ? "updated_at" : "created_at";
    // reading backwards (prev) walks the opposite direction, then turns the page round
    const backwards = page?.direction === "prev";
    const asc = (filter.sort === "ASC") !== backwards;
    if (page) {
      const cmp = asc ? ">" : "<";
      add(
        `(${col} ${cmp} ? OR (${col} = ? AND seq ${cmp} ?))`,
        page.at.key,
        page.at.key,
        page.at.seq,
      );
    }
    const dir = asc ? "ASC" : "DESC";
    const rows = this.#store.db.prepare(
      `SELECT seq, ${col} AS k, record FROM transactions ${
        where.length ? `WHERE ${where.join(" AND ")}` : ""
      } ORDER BY ${col} ${dir}, seq ${dir} LIMIT ?`,
    ).all(...args, filter.limit + 1) as Row[];
    const more = rows.length > filter.limit;
    const kept = rows.slice(0, filter.limit);
    if (backwards) kept.reverse();
    const at = (r: Row): PagePosition => ({ key: Number(r.k), seq: Number(r.seq) });
    return {
      records: kept.map((r) => JSON.parse(String(r.record))),
      more,
      edges: kept.length ? [at(kept[0]), at(kept[kept.length - 1])] : undefined,
    };
  }

  /** Stores a new transaction. */
  insert(
    t: { record: TransactionRecord; request: CheckedRequest; externalTxId?: string; at: number },
  ): void {
    this.#stmts.insert.run(
      t.record.id,
      t.externalTxId ?? null,
      t.record.status,
      t.record.operation as string,
      t.request.accountId,
      encodeRequest(t.request),
      JSON.stringify(t.record),
      t.at,
      t.at,
    );
  }

  /** Writes a changed record and the signed bytes kept with it. */
  update(record: TransactionRecord, signed: SignedBytes, at: number): void {
    this.#stmts.update.run(
      record.status,
      record.subStatus ?? "",
      record.txHash || null,
      signed.raw,
      signed.nonce,
      JSON.stringify(record),
      at,
      record.id,
    );
  }

  /** Ids of the transactions not yet final, oldest first. */
  unfinishedIds(): string[] {
    return (this.#stmts.unfinished.all() as Row[]).map((r) => String(r.id));
  }
}

const FEE_KINDS: Record<string, string> = { eip1559: "EIP-1559", legacy: "legacy" };

/**
 * The `limit` latest transactions, newest first, as the console lists them:
 * `id`, `status`, `subStatus`, `operation`, `txHash`, `createdAt`,
 * `createdBy` (the API user's id) and `fee`, the fee asked for (kept in the
 * checked request: the SDK's response model has no field for it): `LOW`,
 * `MEDIUM` or `HIGH`, `EIP-1559` or `legacy` for explicit fees, `""` for a message.
 *
 * @example
 * ```ts
 * import type { EmulatorContext } from "../context.ts";
 * declare const ctx: EmulatorContext;
 * const rows = latestTransactions(ctx.store, 50);
 * ```
 */
export function latestTransactions(store: Store, limit: number): Row[] {
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
  }));
}
