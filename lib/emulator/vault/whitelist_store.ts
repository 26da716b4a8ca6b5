/**
 * Where the whitelisted wallets are kept: the `whitelisted_wallets` table and
 * every query on it (the only file of the vault room with SQL). With
 * `--state FILE` they survive a restart, as the transactions naming them do;
 * in memory they last one run.
 *
 * @module
 */

import type { Store } from "../store.ts";
import type { WhitelistedWallet } from "./whitelist.ts";

/** Schema of the whitelisted wallets table (additive). */
export const WHITELIST_SCHEMA = `
CREATE TABLE IF NOT EXISTS whitelisted_wallets (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  name TEXT NOT NULL,
  address TEXT NOT NULL
);
`;

/**
 * The whitelisted wallets of a {@linkcode Store}, in the order they were added.
 *
 * @example
 * ```ts
 * import { Store } from "../store.ts";
 * const wallets = new WhitelistStore(Store.open());
 * wallets.insert({ type: "EXTERNAL_WALLET", id: "w1", name: "Cold", address: "0x…" });
 * wallets.all().length; // 1
 * ```
 */
export class WhitelistStore {
  readonly #store: Store;

  /** Creates the table in `store` if it is not there yet. */
  constructor(store: Store) {
    this.#store = store;
    store.migrate(WHITELIST_SCHEMA);
  }

  /** Adds one wallet (its checks are done: `whitelist.ts`). */
  insert(w: WhitelistedWallet): void {
    this.#store.db.prepare(
      "INSERT INTO whitelisted_wallets (id, type, name, address) VALUES (?, ?, ?, ?)",
    ).run(w.id, w.type, w.name, w.address);
  }

  /** Every wallet, in the order added. */
  all(): WhitelistedWallet[] {
    return this.#store.db.prepare(
      "SELECT type, id, name, address FROM whitelisted_wallets ORDER BY seq",
    ).all() as unknown as WhitelistedWallet[];
  }
}
