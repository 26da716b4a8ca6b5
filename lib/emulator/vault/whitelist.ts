/**
 * The workspace's whitelisted wallets (external, internal, contract): empty
 * at a first start, filled through `POST /admin/wallets` (`wallets.ts`),
 * kept in the `whitelisted_wallets` table (so with `--state` they survive a
 * restart, as the transactions naming them do). Transactions may name one as their destination
 * (`{type: "EXTERNAL_WALLET", id}`), which is how clients that refuse
 * one-time addresses (the bridge's `--oneTimeAddressesEnabled false`) send.
 *
 * @module
 */

import { getAddress, isAddress } from "viem";
import { BadRequestError } from "../../core/mod.ts";
import type { Store } from "../store.ts";
import type { WhitelistedAddress, WhitelistedWalletType } from "../../platform/wallets.ts";

/** The whitelist kinds, as destination types name them. */
export const WALLET_TYPES: readonly WhitelistedWalletType[] = [
  "EXTERNAL_WALLET",
  "INTERNAL_WALLET",
  "CONTRACT",
];

/** One whitelist kind. */
export type WalletType = WhitelistedWalletType;

/** A whitelisted wallet with its one address (checksummed): what the platform client reads. */
export type WhitelistedWallet = WhitelistedAddress;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS whitelisted_wallets (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  name TEXT NOT NULL,
  address TEXT NOT NULL
);
`;

/**
 * The whitelisted wallets of the workspace, in the order they were added.
 *
 * @example
 * ```ts
 * import { Store } from "../store.ts";
 * const whitelist = new Whitelist(Store.open());
 * whitelist.add({ name: "Cold", address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" });
 * whitelist.list("EXTERNAL_WALLET").length; // 1
 * ```
 */
export class Whitelist {
  readonly #wallets: WhitelistedWallet[];
  readonly #store: Store;

  /** The wallets kept in `store` (creating their table when missing). */
  constructor(store: Store) {
    store.db.exec(SCHEMA);
    this.#store = store;
    this.#wallets = store.db.prepare(
      "SELECT type, id, name, address FROM whitelisted_wallets ORDER BY seq",
    ).all() as unknown as WhitelistedWallet[];
  }

  /** Adds a wallet; throws a `BadRequestError` (answered 400) for a bad type, name or address. */
  add(input: { type?: unknown; name?: unknown; address?: unknown }): WhitelistedWallet {
    const type = input.type ?? "EXTERNAL_WALLET";
    if (!(WALLET_TYPES as readonly unknown[]).includes(type)) {
      throw new BadRequestError(`type must be one of ${WALLET_TYPES.join(", ")}.`);
    }
    if (typeof input.address !== "string" || !isAddress(input.address, { strict: false })) {
      throw new BadRequestError("address must be an EVM address (0x and 40 hex digits).");
    }
    const name = input.name === undefined ? `Whitelisted ${this.#wallets.length + 1}` : input.name;
    if (typeof name !== "string" || name.length === 0 || name.length > 100) {
      throw new BadRequestError("name must be a text of 1 to 100 characters.");
    }
    const wallet: WhitelistedWallet = {
      type: type as WalletType,
      id: crypto.randomUUID(),
      name,
      address: getAddress(input.address),
    };
    this.#store.db.prepare(
      "INSERT INTO whitelisted_wallets (id, type, name, address) VALUES (?, ?, ?, ?)",
    ).run(wallet.id, wallet.type, wallet.name, wallet.address);
    this.#wallets.push(wallet);
    return wallet;
  }

  /** The wallets of one kind, in the order they were added. */
  list(type: WalletType): WhitelistedWallet[] {
    return this.#wallets.filter((w) => w.type === type);
  }

  /** The wallet of this kind and id, or `undefined`. */
  find(type: WalletType, id: string): WhitelistedWallet | undefined {
    return this.#wallets.find((w) => w.type === type && w.id === id);
  }
}
