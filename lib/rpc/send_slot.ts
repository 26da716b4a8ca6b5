/**
 * The slot rule across bridge processes. With a caller's nonce,
 * (chain, sender, nonce) is one slot: at most one transaction can take it.
 *
 * - **Who holds a slot.** The platform transaction created with the slot's
 *   derived `externalTxId` (`send_identity.ts`). A request for a held slot
 *   joins its transaction when it asks for the same transfer (destination,
 *   value, data: fee and gas fields may differ) and is refused, naming the
 *   transaction, when it asks for another ({@linkcode SendSlots.adoption}'s
 *   judge, with the proof of `send_proof.ts`). The platform refuses a second
 *   create with one `externalTxId`, so two bridges creating the same slot
 *   at the same instant cannot both succeed.
 * - **Where a new send would land.** The platform numbers an account's
 *   transactions in the order they are created, so the nonce a new send gets
 *   is the chain's next one (pending included) plus the platform transactions
 *   of the vault that are in flight and have no hash yet
 *   ({@linkcode SendSlots.inFlight}). A send asking for a lower nonce is
 *   refused (or joins the slot's holder), one asking for a higher waits.
 * - **Two bridges at the same instant** (different slots, or a send without a
 *   nonce): after a create, the transactions in flight created before it
 *   are listed again ({@linkcode SendSlots.notRaced}); one that was not there
 *   when the nonce was judged takes the nonce, so the new transaction is
 *   cancelled while it is still cancellable and the send refused. What
 *   remains: a rival created and signed within the same moment (between the
 *   create and the list, and already past signing) is not seen, and a
 *   transaction signed before it could be cancelled lands at the next nonce.
 *
 * @module
 */

import {
  abortableSleep,
  cancelTransaction,
  listTransactions,
  type PlatformClient,
  type Transaction,
  type TransactionRequest,
} from "../platform/mod.ts";
import {
  chainDifferences,
  type ChainTransaction,
  NOT_ON_CHAIN,
  notTheSend,
  platformDifferences,
} from "./send_proof.ts";
import type { SendIdentity } from "./send_identity.ts";
import { RpcError, RpcErrorCode } from "./protocol.ts";
import { messageOf } from "../core/mod.ts";

/** What `platform_transaction.ts` asks about a transaction found holding a slot. */
export interface Adoption {
  /** The send (its slot names the derived `externalTxId`s). */
  readonly identity: SendIdentity;
  /**
   * `same`: the found transaction is this send (its record is the request's,
   * and its hash, if any, is the chain's); `gone`: it is this send's slot but
   * its hash is not on the chain (a restarted dev chain; a new attempt is
   * made); throws naming it when it is another send.
   */
  judge(t: Transaction): Promise<"same" | "gone">;
  /**
   * The hash an adopted transaction ended with is on the chain and is this
   * send; else throws. Waits up to 15 s for the hash to reach the node, less
   * when `signal` aborts (then rejects with its reason: the bridge is stopping).
   */
  landed(t: Transaction, signal?: AbortSignal): Promise<void>;
}

/** Options of {@linkcode SendSlots}. */
export interface SendSlotsOptions {
  /** The platform client. */
  client: PlatformClient;
  /**
   * The chain's transaction by hash (`eth_getTransactionByHash`), null when
   * the chain lacks it: a platform transaction found holding a send's slot
   * is adopted only when its hash is on the chain and is the send. Without
   * it, found hashes are not checked on chain (the bridge always gives one).
   */
  chainTransaction?: (hash: string) => Promise<ChainTransaction | null>;
  /** Logs steps (`--verbose`). */
  log?: (line: string) => void;
}

/** How long a hash the platform shows waits to reach the bridge's node: 15 s. */
const HASH_WAIT_MS = 15_000;

/**
 * Statuses of a transaction in flight that has no nonce yet (before signing):
 * the platform's progress statuses before BROADCASTING.
 */
const UNNUMBERED = [
  "SUBMITTED",
  "QUEUED",
  "PENDING_AML_SCREENING",
  "PENDING_ENRICHMENT",
  "PENDING_AUTHORIZATION",
  "PENDING_3RD_PARTY_MANUAL_APPROVAL",
  "PENDING_3RD_PARTY",
  "PENDING_SIGNATURE",
];

/**
 * The platform-wide view of slots; see the module doc.
 *
 * @example
 * ```ts
 * import type { PlatformClient } from "../platform/mod.ts";
 * declare const client: PlatformClient;
 * const slots = new SendSlots({ client, chainTransaction: async () => null });
 * // (null: the chain has no such hash)
 * (await slots.inFlight("0", "ETH_TEST5")).length; // transactions of vault 0 not yet numbered
 * ```
 */
export class SendSlots {
  readonly #o: SendSlotsOptions;

  /** Keeps the options. */
  constructor(options: SendSlotsOptions) {
    this.#o = options;
  }

  /**
   * The transactions of vault `vaultId` in `assetId` in flight without a
   * nonce yet (messages left out), oldest first: each will take the
   * account's next nonce before a send created now.
   */
  async inFlight(vaultId: string, assetId: string): Promise<Transaction[]> {
    const list = await listTransactions(this.#o.client, {
      status: UNNUMBERED.join(","),
      sourceType: "VAULT_ACCOUNT",
      sourceId: vaultId,
      assets: assetId,
      orderBy: "createdAt",
      sort: "ASC",
      limit: 500,
    });
    return list.filter((t) =>
      t.operation !== "TYPED_MESSAGE" && UNNUMBERED.includes(t.status) &&
      String((t.source as { id?: unknown } | undefined)?.id ?? vaultId) === vaultId
    );
  }

  /**
   * After transaction `mine` was created for the send `identity` of vault
   * `vaultId`, whose nonce was judged with the in-flight transactions
   * `before`: when one in flight now was created before it and was not
   * counted (a send of another process created at the same moment), that one
   * takes the nonce, so `mine` is cancelled while it still can be and the
   * send refused, naming both. When the platform cannot tell: as before.
   */
  async notRaced(
    mine: string,
    before: readonly Transaction[],
    vaultId: string,
    assetId: string,
    { nonce, from }: SendIdentity,
  ): Promise<void> {
    const now = await this.inFlight(vaultId, assetId).catch(() => [] as Transaction[]);
    const at = now.findIndex((t) => t.id === mine);
    if (at < 0) return; // already numbered (signed) or ended: nothing to learn here
    const counted = new Set(before.map((t) => t.id));
    const rival = now.slice(0, at).find((t) => !counted.has(t.id))?.id;
    if (rival === undefined) return;
    // false when it can no longer be cancelled (signed, or ended)
    const cancelled = await cancelTransaction(this.#o.client, mine).then(() => true, (e) => {
      this.#o.log?.(`cancel of platform transaction ${mine}: ${messageOf(e)}`);
      return false;
    });
    throw new RpcError(
      RpcErrorCode.server,
      cancelled
        ? `nonce ${nonce} of ${from} was taken at the same moment by platform transaction ${rival} (created by another process just before this send's ${mine}); ${mine} was cancelled and nothing was sent. Check ${rival}, then send again with the account's next nonce.`
        : `nonce ${nonce} of ${from} was taken at the same moment by platform transaction ${rival} (created by another process just before this send's ${mine}), and ${mine} could no longer be cancelled: it lands at a later nonce than asked.`,
      { txId: mine, rival, status: cancelled ? "CANCELLED" : undefined },
    );
  }

  /** The judge and proof of a send `body` from `identity.from` at its slot. */
  adoption(identity: SendIdentity, body: TransactionRequest): Adoption {
    const from = identity.from;
    const read = this.#o.chainTransaction;
    const chainOf = async (t: Transaction) =>
      read ? chainDifferences(await read(t.txHash!), body, from, identity.nonce) : [];
    const notThis = (t: Transaction, differences: string[]) =>
      notTheSend(t, `holds nonce ${identity.nonce} of ${from}`, differences);
    return {
      identity,
      judge: async (t) => {
        const record = platformDifferences(t, body, from);
        if (record.length) throw notThis(t, record);
        if (!t.txHash) return "same";
        const chain = await chainOf(t);
        if (chain.length === 0) return "same";
        if (chain[0] === NOT_ON_CHAIN) {
          // Landed (as the platform says) on a chain that no longer has it: a restarted dev chain.
          if (t.status === "COMPLETED") {
            this.#o.log?.(
              `platform transaction ${t.id} (${t.externalTxId}) has hash ${t.txHash}, which the chain does not have: a new attempt`,
            );
            return "gone";
          }
          return "same"; // on its way to the node: `landed` waits for it
        }
        throw notThis(t, chain);
      },
      landed: async (t, signal) => {
        for (let waited = 0;; waited += 250) {
          const chain = await chainOf(t);
          if (chain.length === 0) return;
          if (chain[0] !== NOT_ON_CHAIN) throw notThis(t, chain);
          if (waited >= HASH_WAIT_MS) {
            throw new RpcError(
              RpcErrorCode.server,
              `Platform transaction ${t.id} (externalTxId ${t.externalTxId}) holds nonce ${identity.nonce} of ${from} with hash ${t.txHash}, which the chain this bridge serves does not have after ${
                HASH_WAIT_MS / 1000
              } s. The hash is not answered: check the transaction on the platform and the chain (--rpcUrl).`,
              { txId: t.id, externalTxId: t.externalTxId ?? undefined, txHash: t.txHash },
            );
          }
          await abortableSleep(250, signal);
        }
      },
    };
  }
}
