/**
 * Where the custody delays of transactions are kept: the `transaction_delays`
 * table, one row per transaction and stage (`approval`, `signing`) saying
 * when that stage ends. The rules are in `custody_delays.ts`; this file only
 * holds the SQL. The rows make a restart with `--state` resume a delay with
 * the time that remained, and tell a transaction waiting out an approval
 * delay from one held by a `hold` fault (no row).
 *
 * @module
 */

import type { StatementSync } from "node:sqlite";
import type { Row, Store } from "../store.ts";

/** A stage of a transaction that a custody delay can make last. */
export type DelayStage = "approval" | "signing";

/** Schema of the delays table. */
export const DELAYS_SCHEMA = `
CREATE TABLE IF NOT EXISTS transaction_delays (
  id TEXT NOT NULL,
  stage TEXT NOT NULL,
  delay_ms INTEGER NOT NULL,
  due_at INTEGER NOT NULL,
  PRIMARY KEY (id, stage)
);
`;

/** A recorded delay: how long it was drawn and when it ends (epoch ms). */
export interface RecordedDelay {
  /** The drawn delay, ms. */
  delayMs: number;
  /** When the stage ends, epoch ms. */
  dueAt: number;
}

/**
 * The delays table of one emulator store. Creates the table when missing.
 *
 * @example
 * ```ts
 * import { Store } from "../store.ts";
 * const store = Store.open();
 * const delays = new DelayStore(store);
 * delays.put("6f1c…", "approval", { delayMs: 120_000, dueAt: Date.now() + 120_000 });
 * ```
 */
export class DelayStore {
  readonly #stmts: Record<"put" | "get" | "remove", StatementSync>;

  /** Prepares the queries on `store` (creating the table first). */
  constructor(store: Store) {
    store.migrate(DELAYS_SCHEMA);
    const db = store.db;
    this.#stmts = {
      put: db.prepare(
        "INSERT OR REPLACE INTO transaction_delays (id, stage, delay_ms, due_at) VALUES (?, ?, ?, ?)",
      ),
      get: db.prepare("SELECT delay_ms, due_at FROM transaction_delays WHERE id = ? AND stage = ?"),
      remove: db.prepare("DELETE FROM transaction_delays WHERE id = ?"),
    };
  }

  /** Records the delay of `stage` of transaction `id`. */
  put(id: string, stage: DelayStage, d: RecordedDelay): void {
    this.#stmts.put.run(id, stage, d.delayMs, d.dueAt);
  }

  /** The recorded delay of `stage` of transaction `id`, or `undefined`. */
  get(id: string, stage: DelayStage): RecordedDelay | undefined {
    const r = this.#stmts.get.get(id, stage) as Row | undefined;
    return r ? { delayMs: Number(r.delay_ms), dueAt: Number(r.due_at) } : undefined;
  }

  /** Forgets every delay of transaction `id` (it ended). */
  remove(id: string): void {
    this.#stmts.remove.run(id);
  }
}
