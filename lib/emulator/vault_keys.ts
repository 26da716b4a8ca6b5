/**
 * The vault accounts' keys: account i signs with the key at
 * `m/44'/60'/0'/0/i` of the mnemonic (default anvil's, whose first accounts
 * anvil funds). Keys are derived on first use and kept in memory only.
 *
 * @module
 */

import { type HDAccount, mnemonicToAccount } from "viem/accounts";

/** Anvil's default mnemonic. */
export const ANVIL_MNEMONIC = "test test test test test test test test test test test junk";

/**
 * The keys of `count` vault accounts.
 *
 * @example
 * ```ts
 * const keys = new VaultKeys(ANVIL_MNEMONIC, 10);
 * keys.address(0); // 0xf39F...2266
 * ```
 */
export class VaultKeys {
  readonly count: number;
  readonly #mnemonic: string;
  readonly #cache = new Map<number, HDAccount>();

  constructor(mnemonic: string, count: number) {
    this.#mnemonic = mnemonic;
    this.count = count;
    // derive the first one now so that a bad mnemonic fails at start
    this.account(0);
  }

  /** True when `id` names an existing account ("0".."count-1"). */
  has(id: string): boolean {
    return /^(0|[1-9]\d*)$/.test(id) && Number(id) < this.count;
  }

  /** The signing account of vault account `index`. */
  account(index: number): HDAccount {
    let a = this.#cache.get(index);
    if (!a) {
      a = mnemonicToAccount(this.#mnemonic, { addressIndex: index });
      this.#cache.set(index, a);
    }
    return a;
  }

  /** The checksummed address of vault account `index`. */
  address(index: number): `0x${string}` {
    return this.account(index).address;
  }
}
