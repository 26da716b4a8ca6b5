/**
 * One platform transaction, created at most once and followed to its end:
 * each create carries one `Idempotency-Key` (reused by every retry of it)
 * and an `externalTxId` (unique, or derived from the send's identity so that
 * another bridge process finds it); when a create's answer is lost the
 * transaction is looked up by its `externalTxId` before anything is created
 * again. Status polling starts fast and backs off; final failures and the
 * overall deadline become JSON-RPC errors that carry the platform
 * transaction id. `custody.ts` decides what to send and in which order.
 *
 * @module
 */

import {
  abortableSleep,
  createTransaction,
  findTransactionByExternalId,
  getTransaction,
  isRetryable,
  PlatformApiError,
  type PlatformClient,
  type Transaction,
  type TransactionRequest,
} from "../platform/mod.ts";
import { TRANSACTION_FAILURE_STATUSES, TRANSACTION_SENT_STATUSES } from "../core/mod.ts";
import { RpcError, RpcErrorCode } from "./protocol.ts";
import { derivedExternalTxId } from "./send_identity.ts";
import type { Adoption } from "./send_slot.ts";
import type { SendProgress } from "./send_progress.ts";

/** Options of {@linkcode PlatformTransactions}; defaults stated per field. */
export interface PlatformTransactionOptions {
  /** The platform client (one for the whole bridge). */
  client: PlatformClient;
  /** Prefix of each transaction's `externalTxId`; default `service-rpc-`. */
  externalTxIdPrefix?: string;
  /** Fixed polling interval in ms; default adaptive ({@linkcode pollDelay}: 5 ms doubling to 2 s). */
  pollingIntervalMs?: number;
  /** Overall deadline of one transaction in ms; default 4 h (human approvals). */
  txTimeoutMs?: number;
  /** Logs the bridge's steps (`--verbose`). */
  log?: (line: string) => void;
  /** Logs each transaction's creation and status changes (`--logTransactionStatusChanges`); default `log`. */
  logStatus?: (line: string) => void;
  /** Clock; default `Date.now`. */
  now?: () => number;
  /** Sleeps; default a timer that the signal cancels. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Unique id source for `externalTxId`; default `crypto.randomUUID`. */
  uuid?: () => string;
}

/** Default overall deadline of one transaction: 4 hours. */
export const DEFAULT_TX_TIMEOUT_MS = 4 * 3_600_000;

/**
 * The adaptive polling schedule, the wait before poll number `poll` (from 0):
 * 5 ms, doubling each poll, capped at 2 s (5, 10, 20, … 1280, 2000, 2000, …).
 * A transaction that completes within milliseconds (the emulator, a fast
 * policy) is seen a few ms after it completes; one that takes minutes costs
 * nine polls in its first 2.6 s and then one every 2 s, as with any 2 s poll.
 * `fixedMs` (`--pollingInterval`) replaces the schedule.
 *
 * @example
 * ```ts
 * [0, 1, 2, 9].map((n) => pollDelay(n)); // [5, 10, 20, 2000]
 * ```
 */
export function pollDelay(poll: number, fixedMs?: number): number {
  if (fixedMs !== undefined) return fixedMs;
  return Math.min(POLL_CAP_MS, POLL_FIRST_MS * 2 ** Math.min(poll, 20));
}

/** The first wait of the adaptive polling schedule. */
const POLL_FIRST_MS = 5;
/** The longest wait of the adaptive polling schedule. */
const POLL_CAP_MS = 2000;

/**
 * Did a create perhaps reach the platform without us hearing the answer?
 * Exactly when the platform client would retry it (`isRetryable`).
 */
export const ambiguous: (e: unknown) => boolean = isRetryable;

/**
 * What a platform transaction is followed for: `hash`, a send's, once it is
 * broadcasting or later; `signature`, a message's, once it is completed.
 */
export type Outcome = "hash" | "signature";

/** Whether `t` shows the `outcome` it is followed for. */
function hasOutcome(t: Transaction, outcome: Outcome): boolean {
  return outcome === "hash"
    ? (TRANSACTION_SENT_STATUSES as readonly string[]).includes(t.status) && !!t.txHash
    : t.status === "COMPLETED" && !!t.signedMessages?.length;
}

/**
 * Creates platform transactions at most once and follows them to their end.
 *
 * @example
 * ```ts
 * import type { PlatformClient, TransactionRequest } from "../platform/mod.ts";
 * declare const client: PlatformClient;
 * declare const body: TransactionRequest;
 * const txs = new PlatformTransactions({ client });
 * const done = await txs.run(body, undefined, "hash"); // BROADCASTING or later, with its hash
 * ```
 */
export class PlatformTransactions {
  readonly #o: PlatformTransactionOptions;
  readonly #now: () => number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #uuid: () => string;
  readonly #prefix: string;

  /** Keeps the options; nothing is sent until {@linkcode run}. */
  constructor(options: PlatformTransactionOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? abortableSleep;
    this.#uuid = options.uuid ?? (() => crypto.randomUUID());
    this.#prefix = options.externalTxIdPrefix ?? "service-rpc-";
  }

  /**
   * The platform transaction that holds the slot of `adoption` (made earlier,
   * by another bridge process), found by its derived `externalTxId`s and
   * proven to be this send (`adoption.judge` throws when it is another);
   * failed ones and ones whose hash the chain lacks are passed over.
   */
  async findEarlier(
    adoption: Adoption,
    signal: AbortSignal | undefined,
  ): Promise<{ id: string; externalTxId: string } | undefined> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const externalTxId = await derivedExternalTxId(this.#prefix, adoption.identity, attempt);
      const found = await findTransactionByExternalId(this.#o.client, externalTxId, signal);
      if (!found) return undefined;
      if (isFailure(found.status)) continue;
      if (await adoption.judge(found) === "gone") continue;
      return { id: found.id, externalTxId };
    }
    return undefined;
  }

  /** The deadline of a transaction started now. */
  #deadline(): number {
    return this.#now() + (this.#o.txTimeoutMs ?? DEFAULT_TX_TIMEOUT_MS);
  }

  /**
   * Creates the transaction exactly once and polls it to a final state.
   * With `adopt` (a send whose caller gave a nonce) its `externalTxId`
   * comes from the send's slot, so another bridge process finds it; a
   * transaction found holding it is followed only once proven this send
   * (see `send_slot.ts`), and its hash only once the chain has it.
   * `onCreated` may refuse what was created (it then cancels it itself).
   */
  async run(
    body: TransactionRequest,
    signal: AbortSignal | undefined,
    outcome: Outcome,
    progress?: SendProgress,
    adopt?: Adoption,
    onCreated?: (id: string, adopted: boolean) => void | Promise<void>,
  ): Promise<Transaction> {
    const deadline = this.#deadline();
    const created = await this.#create(body, adopt, deadline, signal);
    await onCreated?.(created.id, created.adopted);
    const done = await this.follow(created, signal, outcome, progress, deadline);
    if (created.adopted && adopt) await adopt.landed(done, signal);
    return done;
  }

  /**
   * Polls the platform transaction `id` until it shows its `outcome` or
   * failed, or the deadline (by default, that of a transaction started now).
   */
  async follow(
    { id, externalTxId }: { id: string; externalTxId: string },
    signal: AbortSignal | undefined,
    outcome: Outcome,
    progress: SendProgress | undefined,
    deadline = this.#deadline(),
  ): Promise<Transaction> {
    progress?.created(id);
    const logStatus = this.#o.logStatus ?? this.#o.log;
    let last = "";
    for (let poll = 0;; poll++) {
      const remaining = deadline - this.#now();
      if (remaining <= 0) {
        throw new RpcError(
          RpcErrorCode.server,
          `Platform transaction ${id} is still ${last || "pending"} after ${
            Math.round((this.#o.txTimeoutMs ?? DEFAULT_TX_TIMEOUT_MS) / 1000)
          } s (--txTimeout); it may still complete: check it on the platform before sending again.`,
          { txId: id, status: last || undefined, externalTxId },
        );
      }
      await this.#sleep(Math.min(pollDelay(poll, this.#o.pollingIntervalMs), remaining), signal);
      let t: Transaction;
      try {
        t = await getTransaction(this.#o.client, id, signal);
      } catch (e) {
        if (ambiguous(e)) continue; // transient: keep polling until the deadline
        throw e;
      }
      if (t.status !== last) {
        logStatus?.(
          `platform transaction ${id}: ${t.status}${t.subStatus ? ` (${t.subStatus})` : ""}${
            t.txHash ? ` ${t.txHash}` : ""
          }`,
        );
        last = t.status;
      }
      if (hasOutcome(t, outcome)) return t;
      progress?.status(t.status);
      if (isFailure(t.status)) {
        const rejected = t.status === "REJECTED" || t.status === "CANCELLED";
        throw new RpcError(
          rejected ? RpcErrorCode.userRejected : RpcErrorCode.server,
          `Platform transaction ${id} ended ${t.status}${t.subStatus ? ` (${t.subStatus})` : ""}.`,
          { txId: id, status: t.status, subStatus: t.subStatus ?? undefined, externalTxId },
        );
      }
      if (t.status === "COMPLETED") {
        throw new RpcError(
          RpcErrorCode.server,
          `Platform transaction ${id} completed without a result (no hash or signature).`,
          { txId: id, status: t.status },
        );
      }
    }
  }

  /**
   * Creates a transaction at most once, even when answers are lost. With
   * `adopt`, an `externalTxId` already used by a failed transaction at the
   * same slot (an earlier attempt, rejected or cancelled) or by one whose
   * hash the chain lacks moves on to the slot's next attempt; one used by a
   * live transaction is that transaction once proven this send (else the
   * judge's error).
   */
  async #create(
    body: TransactionRequest,
    adopt: Adoption | undefined,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<{ id: string; externalTxId: string; adopted: boolean }> {
    const client = this.#o.client;
    let attempt = 1;
    let externalTxId = adopt
      ? await derivedExternalTxId(this.#prefix, adopt.identity, attempt)
      : `${this.#prefix}${this.#uuid()}`;
    let key = client.newIdempotencyKey();
    const lostFor = new Set<string>(); // ids whose create may have happened unheard
    for (let retry = 0;; retry++) {
      try {
        const created = await createTransaction(client, { ...body, externalTxId }, {
          idempotencyKey: key,
          signal,
        });
        (this.#o.logStatus ?? this.#o.log)?.(
          `platform transaction ${created.id} created (${body.operation}, externalTxId ${externalTxId})`,
        );
        return { id: created.id, externalTxId, adopted: false };
      } catch (e) {
        const lost = ambiguous(e);
        const duplicate = e instanceof PlatformApiError && e.status === 400;
        if (!lost && !duplicate) throw e;
        if (lost) lostFor.add(externalTxId);
        // The create may have happened: look before creating again.
        let found: Transaction | undefined;
        try {
          found = await findTransactionByExternalId(client, externalTxId, signal);
        } catch (lookupError) {
          if (!ambiguous(lookupError)) throw lookupError;
        }
        const ours = lostFor.has(externalTxId); // perhaps this call's own create, unheard
        // Not this call's own: taken only as this send, proven (the judge throws otherwise).
        const verdict = found && adopt && !ours
          ? (isFailure(found.status) ? "failed" : await adopt.judge(found))
          : undefined;
        if (
          found && adopt && duplicate && !ours && attempt < MAX_ATTEMPTS &&
          (verdict === "failed" || verdict === "gone")
        ) {
          // An earlier attempt at this slot, not this call's, failed or left no trace on the
          // chain: asked again, it is a new one.
          attempt++;
          externalTxId = await derivedExternalTxId(this.#prefix, adopt.identity, attempt);
          key = client.newIdempotencyKey();
          continue;
        }
        if (found) {
          this.#o.log?.(
            `create of ${externalTxId} answered ${
              e instanceof Error ? e.name : "an error"
            }, but the platform has it: ${found.id}`,
          );
          return { id: found.id, externalTxId, adopted: verdict !== undefined };
        }
        if (!lost) throw e;
        if (this.#now() >= deadline) throw e;
        await this.#sleep(Math.min(8000, 250 * 2 ** retry), signal);
      }
    }
  }
}

/** Attempts of one send (derived `externalTxId`s) looked at before giving up. */
const MAX_ATTEMPTS = 50;

/** Whether a transaction status is a final failure. */
export function isFailure(status: string): boolean {
  return (TRANSACTION_FAILURE_STATUSES as readonly string[]).includes(status);
}
