/**
 * The `idempotency` table: one record per scoped `Idempotency-Key` (a hash
 * of the API user, method, path and key: see `idempotency.ts`), with the
 * answer given (status, body, headers) and the hash of the request body. The SQL lives here and nowhere else;
 * the rules (how long a record answers, which answers are kept, what runs
 * while a first request is still in flight) are in `idempotency.ts`.
 *
 * @module
 */

import type { DatabaseSync, StatementSync } from "node:sqlite";

/** Schema of the idempotency records. */
export const IDEMPOTENCY_SCHEMA = `
CREATE TABLE IF NOT EXISTS idempotency (
  key TEXT PRIMARY KEY,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  status INTEGER NOT NULL,
  body TEXT,
  created_at INTEGER NOT NULL,
  headers TEXT
);
`;

/** A stored answer. */
export interface IdempotencyRecord {
  /** HTTP status of the first answer. */
  status: number;
  /** Its JSON body, as text (`null` for none). */
  body: string | null;
  /** Its headers as JSON text (`null` for none). */
  headers: string | null;
  /** When it was stored, ms. */
  createdAt: number;
  /** SHA-256 (hex) of the first request's body; `null` in records made before it was kept. */
  bodyHash: string | null;
}

/**
 * Reads and writes idempotency records (creates the table when missing:
 * {@linkcode IDEMPOTENCY_SCHEMA}).
 *
 * @example
 * ```ts
 * import { Store } from "../store.ts";
 * const store = Store.open();
 * const records = new IdempotencyStore(store.db);
 * records.put("k1", "POST", "/v1/transactions", { status: 200, body: "{}", headers: null, createdAt: Date.now(), bodyHash: null });
 * records.get("k1")?.status; // 200
 * ```
 */
export class IdempotencyStore {
  readonly #select: StatementSync;
  readonly #upsert: StatementSync;

  /** Prepares the statements on `db` (creating the table first). */
  constructor(db: DatabaseSync) {
    db.exec(IDEMPOTENCY_SCHEMA);
    // A replayed answer keeps its headers (e.g. the `Location` of a resend job) and the hash
    // of its request's body; state files made before these columns existed get them here.
    for (const column of ["headers", "body_hash"]) {
      try {
        db.exec(`ALTER TABLE idempotency ADD COLUMN ${column} TEXT`);
      } catch { /* already there */ }
    }
    this.#select = db.prepare(
      `SELECT status, body, headers, created_at AS createdAt, body_hash AS bodyHash
       FROM idempotency WHERE key = ?`,
    );
    this.#upsert = db.prepare(
      `INSERT OR REPLACE INTO idempotency (key, method, path, status, body, created_at, headers, body_hash)
       VALUES (:key, :method, :path, :status, :body, :createdAt, :headers, :bodyHash)`,
    );
  }

  /** The record of `key`, if any (however old). */
  get(key: string): IdempotencyRecord | undefined {
    return this.#select.get(key) as IdempotencyRecord | undefined;
  }

  /** Stores (or replaces) the record of `key` for `method path`. */
  put(key: string, method: string, path: string, record: IdempotencyRecord): void {
    this.#upsert.run({ key, method, path, ...record });
  }
}
