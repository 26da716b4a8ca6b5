/**
 * Signing and sending of chain transactions. Each vault account has a lock;
 * inside it the nonce is the next one after the last sent (first read from
 * the node's pending count), so concurrent transactions never reuse a nonce.
 * A transaction is moved to BROADCASTING with its raw bytes before it is
 * sent, so after a restart it can be sent again ({@linkcode Broadcaster.resend}).
 * Every status change goes through the engine's {@linkcode StatusMoves}.
 *
 * @module
 */

import { formatGwei, type Hex, keccak256, type TransactionReceipt } from "viem";
import type { TransactionDeps } from "./deps.ts";
import { type Fees, nodeOf } from "../chain.ts";
import type { ChainRequest } from "./request_check.ts";
import { classifyNodeError } from "./node_errors.ts";
import type { StatusMoves } from "./status.ts";

/** What the broadcaster needs. */
export interface BroadcasterOptions {
  /** The node, the vault keys, the chain id and the log. */
  ctx: Pick<TransactionDeps, "chain" | "keys" | "config" | "log">;
  /** The engine's status changes. */
  moves: StatusMoves;
  /** The receipt of a hash, `undefined` while not mined. */
  receipt(hash: string): Promise<TransactionReceipt | undefined>;
  /** Whether the engine stopped (nothing is sent after that). */
  stopped(): boolean;
}

/**
 * Signs and sends chain transactions, one vault account at a time.
 *
 * @example
 * ```ts
 * import type { EmulatorContext } from "../context.ts";
 * import type { ChainRequest } from "./request_check.ts";
 * import type { StatusMoves } from "./status.ts";
 * import type { TransactionReceipt } from "viem";
 * declare const ctx: EmulatorContext, moves: StatusMoves, id: string, request: ChainRequest;
 * declare function receipt(hash: string): Promise<TransactionReceipt | undefined>; // the node's, once mined
 * const broadcaster = new Broadcaster({ ctx, moves, receipt, stopped: () => false });
 * const hash = await broadcaster.signAndSend(id, request); // set when CONFIRMING
 * ```
 */
export class Broadcaster {
  readonly #o: BroadcasterOptions;
  readonly #locks = new Map<number, Promise<unknown>>();
  /** The next nonce of each vault account, once known. */
  readonly #nonces = new Map<number, number>();

  /** A broadcaster with no lock held and no nonce known. */
  constructor(options: BroadcasterOptions) {
    this.#o = options;
  }

  async #withLock<T>(accountId: number, fn: () => Promise<T>): Promise<T> {
    const prev = this.#locks.get(accountId) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => {});
    this.#locks.set(accountId, tail);
    try {
      return await next;
    } finally {
      if (this.#locks.get(accountId) === tail) this.#locks.delete(accountId);
    }
  }

  async #fees(req: ChainRequest): Promise<Fees> {
    if (req.fees.kind === "eip1559") {
      return {
        type: "eip1559",
        maxFeePerGas: req.fees.maxFee,
        maxPriorityFeePerGas: req.fees.priorityFee,
      };
    }
    if (req.fees.kind === "legacy") return { type: "legacy", gasPrice: req.fees.gasPrice };
    return await nodeOf(this.#o.ctx).fees(req.fees.level);
  }

  /**
   * Signs the PENDING_SIGNATURE transaction `id` and sends it: BROADCASTING,
   * then CONFIRMING (returns its hash), or FAILED (returns `undefined`). A
   * refused nonce is read again from the node once.
   */
  async signAndSend(id: string, req: ChainRequest): Promise<Hex | undefined> {
    const { ctx, moves } = this.#o;
    const client = nodeOf(ctx).client;
    const account = ctx.keys.account(req.accountId);
    // what the node answers, else `undefined` and the transaction FAILED with the sub-status
    // `subOf` makes of the node error's
    const orFail = async <T>(read: () => Promise<T>, subOf: (sub: string) => string) => {
      try {
        return await read();
      } catch (e) {
        const c = classifyNodeError(e);
        moves.fail(id, subOf(c.subStatus), c.description);
      }
    };
    const unless = (other: string) => (sub: string) => sub === "ERROR_BROADCASTING" ? other : sub;
    const network = () => "NETWORK_ERROR";
    const fees = await orFail(() => this.#fees(req), unless("NETWORK_ERROR"));
    if (!fees) return undefined;
    const gas = req.gasLimit ?? await orFail(
      () =>
        client.estimateGas({
          account: account.address,
          to: req.to,
          value: req.value,
          data: req.data,
        }),
      unless("SMART_CONTRACT_EXECUTION_FAILED"),
    );
    if (gas === undefined) return undefined;
    // a lack of funds is found before signing, as the platform does: such a transfer never
    // reaches BROADCASTING and never carries a hash
    const price = fees.type === "eip1559" ? fees.maxFeePerGas : fees.gasPrice;
    const cost = req.value + gas * price;
    const balance = await orFail(() => client.getBalance({ address: account.address }), network);
    if (balance === undefined) return undefined;
    if (balance < cost) {
      moves.fail(
        id,
        "INSUFFICIENT_FUNDS",
        `insufficient funds: ${account.address} holds ${balance} wei, the transaction needs ${cost}`,
      );
      return undefined;
    }
    let sent: Hex | undefined;
    await this.#withLock(req.accountId, async () => {
      for (let attempt = 0; attempt < 2; attempt++) {
        if (this.#o.stopped()) return;
        // forced to a final status (admin) while waiting for the lock: nothing to send
        if (moves.statusOf(id) !== "PENDING_SIGNATURE") return;
        const nonce = this.#nonces.get(req.accountId) ?? await orFail(
          () => client.getTransactionCount({ address: account.address, blockTag: "pending" }),
          network,
        );
        if (nonce === undefined) return;
        const base = {
          chainId: ctx.config.chainId,
          to: req.to ?? null,
          value: req.value,
          data: req.data,
          gas,
          nonce,
        };
        const raw = await account.signTransaction({ ...base, ...fees });
        const hash = keccak256(raw);
        // the hash comes with BROADCASTING, as the platform's own clients expect (the official
        // EIP-1193 provider answers it there); bytes the node refuses take it away again
        moves.move(id, "BROADCASTING", {
          txHash: hash,
          nonce: String(nonce),
          gasLimit: gas.toString(),
          ...(fees.type === "legacy" ? { feeInfo: { gasPrice: formatGwei(fees.gasPrice) } } : {}),
        }, { raw, nonce });
        try {
          await client.request({ method: "eth_sendRawTransaction", params: [raw] });
          this.#nonces.set(req.accountId, nonce + 1);
          moves.move(id, "CONFIRMING");
          sent = hash;
          return;
        } catch (e) {
          this.#nonces.delete(req.accountId);
          const c = classifyNodeError(e);
          if (c.subStatus === "INVALID_NONCE" && attempt === 0) {
            ctx.log(
              `transaction ${id}: nonce ${nonce} refused (${c.description}); retrying with the node's nonce`,
            );
            moves.move(id, "PENDING_SIGNATURE", { txHash: "" }, { raw: null, nonce: null });
            continue;
          }
          return moves.fail(id, c.subStatus, c.description, { txHash: "" });
        }
      }
    });
    return sent;
  }

  /**
   * Sends again the raw bytes of a BROADCASTING transaction (after a
   * restart) and moves it to CONFIRMING with their hash (returns true); a
   * node that no longer takes them and has no receipt either makes it FAILED,
   * without a hash (returns false).
   */
  async resend(id: string, raw: Hex, accountId: number): Promise<boolean> {
    const { ctx, moves } = this.#o;
    const txHash = keccak256(raw);
    return await this.#withLock(accountId, async () => {
      try {
        await nodeOf(ctx).client.request({ method: "eth_sendRawTransaction", params: [raw] });
      } catch (e) {
        const c = classifyNodeError(e);
        const known = /already known|already imported|known transaction/i.test(c.description);
        if (!known) {
          // maybe it was mined before the restart
          const receipt = await this.#o.receipt(txHash);
          if (!receipt) {
            moves.fail(id, c.subStatus, c.description);
            return false;
          }
        }
      }
      moves.move(id, "CONFIRMING", { txHash });
      return true;
    });
  }
}
