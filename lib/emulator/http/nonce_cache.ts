/**
 * Request-token nonces seen, so a replayed token is refused: kept until the
 * token expires, in memory or (with a state file) in the `auth_nonces`
 * table, so that a restart still refuses replays. The SQL of that table
 * lives here and nowhere else; `auth.ts` only asks {@linkcode NonceCache.add}.
 *
 * @module
 */

import type { DatabaseSync, StatementSync } from "node:sqlite";

/**
 * Nonces seen, kept until their token expires: in memory, or with `db` in
 * the `auth_nonces` table so that a restart (even after SIGKILL) still
 * refuses replays. Each insert commits with `synchronous=NORMAL` (in WAL
 * mode that survives a process crash without an fsync per request), then
 * the connection goes back to `FULL`.
 *
 * @example
 * ```ts
 * const nonces = new NonceCache();
 * nonces.add("n1", 1700000060, 1700000000); // true
 * nonces.add("n1", 1700000060, 1700000001); // false: a replay
 * ```
 */
export class NonceCache {
  readonly #seen = new Map<string, number>();
  readonly #db: DatabaseSync | undefined;
  readonly #insert: StatementSync | undefined;
  readonly #sweep: StatementSync | undefined;
  #sweepAt = 0;

  /** In memory, or persisted in `db` (creating the table when missing). */
  constructor(db?: DatabaseSync) {
    this.#db = db;
    if (db) {
      db.exec(
        "CREATE TABLE IF NOT EXISTS auth_nonces (nonce TEXT PRIMARY KEY, exp INTEGER NOT NULL)",
      );
      this.#insert = db.prepare("INSERT OR IGNORE INTO auth_nonces (nonce, exp) VALUES (?, ?)");
      this.#sweep = db.prepare("DELETE FROM auth_nonces WHERE exp < ?");
    }
  }

  /** Records `nonce` valid until `expSeconds`; false when it was already seen. */
  add(nonce: string, expSeconds: number, nowSeconds: number): boolean {
    if (this.#db) {
      this.#db.exec("PRAGMA synchronous=NORMAL");
      try {
        if (nowSeconds >= this.#sweepAt) {
          this.#sweep!.run(nowSeconds);
          this.#sweepAt = nowSeconds + 30;
        }
        return Number(this.#insert!.run(nonce, expSeconds).changes) === 1;
      } finally {
        this.#db.exec("PRAGMA synchronous=FULL");
      }
    }
    if (nowSeconds >= this.#sweepAt) {
      for (const [n, exp] of this.#seen) if (exp < nowSeconds) this.#seen.delete(n);
      this.#sweepAt = nowSeconds + 30;
    }
    if (this.#seen.has(nonce)) return false;
    this.#seen.set(nonce, expSeconds);
    return true;
  }
}
