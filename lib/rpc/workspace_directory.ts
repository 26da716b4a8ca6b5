/**
 * What the workspace holds, as the bridge needs it: the exposed vault
 * accounts and their addresses for the chain's asset (`eth_accounts`, the
 * vault account a send comes from), and every destination known by address
 * (vault accounts, whitelisted wallets) for sends with one-time addresses
 * off. Read from the platform once and again only when an address is not
 * found and the list is older than 5 s; a failed read is retried on the
 * next call.
 *
 * @module
 */

import {
  getFirstAddress,
  listVaultAccounts,
  listWhitelistedAddresses,
  type PlatformClient,
} from "../platform/mod.ts";
import { RpcError, RpcErrorCode } from "./protocol.ts";

/** A destination the workspace knows by address. */
export interface Known {
  /** The address (0x…). */
  address: string;
  /** What it is, as the platform's transfer peer types say. */
  type: "VAULT_ACCOUNT" | "EXTERNAL_WALLET" | "INTERNAL_WALLET" | "CONTRACT";
  /** The vault account's or wallet's id. */
  id: string;
}

/** Options of {@linkcode WorkspaceDirectory}. */
export interface WorkspaceDirectoryOptions {
  /** The platform client. */
  client: PlatformClient;
  /** The chain's native asset id. */
  assetId: string;
  /** Restricts the exposed accounts; default: every account holding `assetId`. */
  vaultAccountIds?: readonly string[];
  /** Logs accounts left out (no address for the asset). */
  log?: (line: string) => void;
  /** Clock. */
  now: () => number;
}

/** The workspace's accounts and known destinations, read lazily from the platform. */
export class WorkspaceDirectory {
  readonly #o: WorkspaceDirectoryOptions;
  readonly #now: () => number;
  #accounts: Promise<{ address: string; vaultId: string }[]> | undefined;
  #loadedAt = 0;
  #known: Promise<Known[]> | undefined;
  #knownAt = 0;

  /** Nothing is fetched until the first call. */
  constructor(options: WorkspaceDirectoryOptions) {
    this.#o = options;
    this.#now = options.now;
  }

  /** The exposed accounts (address and vault account id), in vault-account order: read once, again with `refresh`. */
  exposed(signal?: AbortSignal, refresh = false): Promise<{ address: string; vaultId: string }[]> {
    if (!this.#accounts || refresh) {
      this.#loadedAt = this.#now();
      const p = this.#fetchAccounts(signal);
      this.#accounts = p;
      p.catch(() => {
        if (this.#accounts === p) this.#accounts = undefined; // retry next time
      });
    }
    return this.#accounts;
  }

  async #fetchAccounts(
    signal?: AbortSignal,
    all = false,
  ): Promise<{ address: string; vaultId: string }[]> {
    const { client, assetId } = this.#o;
    let ids: string[];
    if (this.#o.vaultAccountIds?.length && !all) ids = [...this.#o.vaultAccountIds];
    else {
      ids = [];
      for await (const a of listVaultAccounts(client, { assetId, signal })) ids.push(a.id);
    }
    const out: ({ address: string; vaultId: string } | undefined)[] = new Array(ids.length);
    let next = 0;
    const worker = async () => {
      while (next < ids.length) {
        const i = next++;
        const address = await getFirstAddress(client, ids[i], assetId, signal);
        if (address) out[i] = { address, vaultId: ids[i] };
        else if (!all) {
          this.#o.log?.(`vault account ${ids[i]} has no ${assetId} address: not exposed`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, ids.length) }, worker));
    return out.filter((a) => a !== undefined);
  }

  /**
   * The vault account of an exposed `address`; the list is read again when
   * it is not found and older than 5 s (a vault account may have been added).
   */
  async vaultOf(address: string, signal?: AbortSignal): Promise<string> {
    const find = (list: { address: string; vaultId: string }[]) =>
      list.find((a) => a.address.toLowerCase() === address.toLowerCase())?.vaultId;
    let id = find(await this.exposed(signal));
    if (id === undefined && this.#now() - this.#loadedAt > 5000) {
      id = find(await this.exposed(signal, true)); // a vault account may have been added
    }
    if (id === undefined) {
      throw new RpcError(
        RpcErrorCode.unauthorized,
        `Address ${address} is not one of the exposed vault accounts (see eth_accounts).`,
      );
    }
    return id;
  }

  /** Every destination the workspace knows by address: vault accounts, then whitelisted wallets. */
  async #fetchKnown(signal?: AbortSignal): Promise<Known[]> {
    const [vaults, wallets] = await Promise.all([
      this.#fetchAccounts(signal, true),
      listWhitelistedAddresses(this.#o.client, this.#o.assetId, signal),
    ]);
    return [
      ...vaults.map((v) => ({ address: v.address, type: "VAULT_ACCOUNT" as const, id: v.vaultId })),
      ...wallets,
    ];
  }

  /**
   * The workspace's destination for `address` (one-time addresses off), as
   * the platform's web3 provider resolves it; refreshed when not found and
   * older than 5 s (a wallet may just have been whitelisted).
   */
  async destinationOf(address: string, signal?: AbortSignal): Promise<Known> {
    const lookup = async (refresh: boolean) => {
      if (!this.#known || refresh) {
        this.#knownAt = this.#now();
        const p = this.#fetchKnown(signal);
        this.#known = p;
        p.catch(() => {
          if (this.#known === p) this.#known = undefined;
        });
      }
      return (await this.#known).find((k) => k.address.toLowerCase() === address.toLowerCase());
    };
    let found = await lookup(false);
    if (!found && this.#now() - this.#knownAt > 5000) found = await lookup(true);
    if (!found) {
      throw new RpcError(
        RpcErrorCode.invalidParams,
        `eth_sendTransaction: destination ${address} is not known to the workspace (no vault account or whitelisted wallet has it) and one-time addresses are off (--oneTimeAddressesEnabled false). Whitelist it on the platform, or allow one-time addresses.`,
      );
    }
    return found;
  }
}
