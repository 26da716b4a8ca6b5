/**
 * Receipt polling: the CONFIRMING transactions are watched in one loop that
 * reads the block number every 25 ms (`POLL_MS`) and, once per new block, asks the
 * node for each one's receipt. A receipt moves the transaction to COMPLETED
 * (status 1) or FAILED (`SMART_CONTRACT_EXECUTION_FAILED`, reverted),
 * through the engine's {@linkcode StatusMoves}.
 *
 * @module
 */

import {
  formatEther,
  formatGwei,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
} from "viem";
import { classifyNodeError } from "./node_errors.ts";
import type { StatusMoves } from "./status.ts";
import type { TransactionRecord } from "./store.ts";

/** What the watcher needs. */
export interface ConfirmationsOptions {
  /** The node (asked only once something is watched: a webhook-only emulator has none). */
  client: () => PublicClient;
  /** The engine's status changes (and current statuses). */
  moves: StatusMoves;
  /** The record of transaction `id`, or `undefined`. */
  record(id: string): TransactionRecord | undefined;
  /** A log line. */
  log(line: string): void;
  /** Whether the engine stopped (nothing changes after that). */
  stopped(): boolean;
}

/**
 * The change a mined receipt makes: COMPLETED or FAILED, with the block,
 * fee and contract address.
 */
function receiptOutcome(
  receipt: TransactionReceipt,
): { status: "COMPLETED" | "FAILED"; patch: Partial<TransactionRecord> } {
  const networkFee = formatEther(receipt.gasUsed * receipt.effectiveGasPrice);
  const common = {
    blockInfo: { blockHeight: receipt.blockNumber.toString(), blockHash: receipt.blockHash },
    numOfConfirmations: 1,
    networkFee: Number(networkFee),
    fee: Number(networkFee),
    feeInfo: { networkFee, gasPrice: formatGwei(receipt.effectiveGasPrice) },
    networkRecords: [],
  };
  if (receipt.status === "success") {
    return { status: "COMPLETED", patch: { ...common, subStatus: "CONFIRMED" } };
  }
  return {
    status: "FAILED",
    patch: {
      ...common,
      subStatus: "SMART_CONTRACT_EXECUTION_FAILED",
      errorDescription: "The transaction was mined but reverted.",
    },
  };
}

/** How often the block number is read while something is CONFIRMING, ms. */
const POLL_MS = 25;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * The watcher of CONFIRMING transactions.
 *
 * @example
 * ```ts
 * import type { PublicClient } from "viem";
 * import type { StatusMoves } from "./status.ts";
 * import type { TransactionStore } from "./store.ts";
 * declare const client: PublicClient, moves: StatusMoves, transactions: TransactionStore;
 * declare const id: string; // a transaction in CONFIRMING
 * const record = (id: string) => transactions.record(id);
 * const log = (line: string) => console.error(line);
 * const stopped = () => false;
 * const confirmations = new Confirmations({ client: () => client, moves, record, log, stopped });
 * confirmations.watch(id);
 * ```
 */
export class Confirmations {
  readonly #o: ConfirmationsOptions;
  /** CONFIRMING transactions: id → block number last checked (−1 = never). */
  readonly #confirming = new Map<string, bigint>();
  #loop: Promise<void> | undefined;

  /** A watcher over `options.client`; nothing is watched yet. */
  constructor(options: ConfirmationsOptions) {
    this.#o = options;
  }

  /** The receipt of `hash`, or `undefined` while it is not mined. */
  async receipt(hash: string): Promise<TransactionReceipt | undefined> {
    return await this.#o.client().getTransactionReceipt({ hash: hash as Hex }).catch((e) => {
      if (e instanceof TransactionReceiptNotFoundError) return undefined;
      throw e;
    });
  }

  /**
   * Looks for the receipt at once (a node that mines on every transaction,
   * like anvil by default, has it already), else watches `id`.
   */
  async confirmNow(id: string, hash: Hex): Promise<void> {
    const receipt = await this.receipt(hash).catch(() => undefined); // the watcher retries
    if (receipt && !this.#o.stopped()) this.#complete(id, receipt);
    else this.watch(id);
  }

  /** Watches the CONFIRMING transaction `id` until its receipt is mined. */
  watch(id: string): void {
    this.#confirming.set(id, -1n);
    if (!this.#loop) this.#loop = this.#work().finally(() => this.#loop = undefined);
  }

  /** Stops watching `id` (it ended otherwise). */
  forget(id: string): void {
    this.#confirming.delete(id);
  }

  /** Resolves when the loop has ended (call after the engine stopped). */
  async idle(): Promise<void> {
    await this.#loop;
  }

  #complete(id: string, receipt: TransactionReceipt): void {
    const { status, patch } = receiptOutcome(receipt);
    this.#o.moves.move(id, status, patch);
  }

  async #work(): Promise<void> {
    const client = this.#o.client();
    while (this.#confirming.size > 0 && !this.#o.stopped()) {
      let block: bigint;
      try {
        block = await client.getBlockNumber({ cacheTime: 0 });
      } catch (e) {
        this.#o.log(`cannot read the block number: ${classifyNodeError(e).description}`);
        await sleep(POLL_MS * 10);
        continue;
      }
      const due = [...this.#confirming].filter(([, at]) => at < block).map(([id]) => id);
      await Promise.all(due.map(async (id) => {
        const t = this.#o.record(id);
        if (!t || t.status !== "CONFIRMING") {
          this.#confirming.delete(id);
          return;
        }
        // a node error: asked again at the next poll
        const receipt = await this.receipt(t.txHash).catch(() => null);
        if (receipt === null) return;
        if (!receipt) {
          this.#confirming.set(id, block);
          return;
        }
        this.#confirming.delete(id);
        if (this.#o.stopped()) return;
        this.#complete(id, receipt);
      }));
      if (this.#confirming.size > 0) await sleep(POLL_MS);
    }
  }
}
