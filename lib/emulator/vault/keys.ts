/**
 * The vault accounts' keys: account i signs with the key at
 * `m/44'/60'/0'/0/i` of the mnemonic (default anvil's, whose first accounts
 * anvil funds). Keys are derived on first use and kept in memory only.
 *
 * @module
 */

import { toHex } from "viem";
import {
  type HDAccount,
  mnemonicToAccount,
  type PrivateKeyAccount,
  privateKeyToAccount,
} from "viem/accounts";

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
  /** Number of vault accounts. */
  readonly count: number;
  /** The key at m/44'/60'/0'/0, derived once (the mnemonic's PBKDF2 is slow). */
  readonly #parent: ReturnType<HDAccount["getHdKey"]>;
  readonly #cache = new Map<number, PrivateKeyAccount>();

  /** Keys of `count` accounts from `mnemonic` (throws if it is not BIP-39). */
  constructor(mnemonic: string, count: number) {
    this.count = count;
    this.#parent = mnemonicToAccount(mnemonic, { path: "m/44'/60'/0'/0" }).getHdKey();
  }

  /** True when `id` names an existing account ("0".."count-1"). */
  has(id: string): boolean {
    return /^(0|[1-9]\d*)$/.test(id) && Number(id) < this.count;
  }

  /**
   * The signing account (viem) of vault account `index`.
   *
   * @ignore
   */
  account(index: number): PrivateKeyAccount {
    let a = this.#cache.get(index);
    if (!a) {
      // child `index` of m/44'/60'/0'/0: the key of mnemonicToAccount(m, { addressIndex: index })
      const key = this.#parent.deriveChild(index).privateKey;
      if (!key) throw new Error(`no private key at m/44'/60'/0'/0/${index}`);
      a = privateKeyToAccount(toHex(key));
      this.#cache.set(index, a);
    }
    return a;
  }

  /** The checksummed address of vault account `index`. */
  address(index: number): `0x${string}` {
    return this.account(index).address;
  }
}
