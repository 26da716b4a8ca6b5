/**
 * The transaction lifecycle: where a transaction changes state. A created
 * transaction is stored as SUBMITTED and then walks, in the background:
 *
 * SUBMITTED → (PENDING_AUTHORIZATION while held or during an approval delay) →
 * PENDING_SIGNATURE (as long as a signing delay) →
 * BROADCASTING (signed; raw transaction stored; `txHash` set: the official
 * EIP-1193 provider ends its wait at BROADCASTING and answers that hash, and the SDK
 * says BROADCASTING may carry it) → CONFIRMING (the node took it) →
 * COMPLETED (receipt mined with status 1), or FAILED with a `subStatus`
 * (see `node_errors.ts`); a transaction the node never took (refused bytes, or a
 * lack of funds found before signing) ends FAILED without a `txHash`. Messages go SUBMITTED → PENDING_SIGNATURE →
 * COMPLETED with `signedMessages`.
 *
 * Every change goes through one method, `#move`, which checks it against the
 * transition table of `status.ts`, writes it (`store.ts`) and emits
 * `transaction.status.updated` (creation: `transaction.created`). The
 * broadcaster (`broadcaster.ts`) and the receipt watcher
 * (`confirmations.ts`) ask for their changes through it; the faults that
 * hold or end a transaction are decided in `../faults/apply.ts`, the custody
 * delays (approval, signing) in `custody_delays.ts`.
 *
 * After a restart, BROADCASTING transactions are sent again and CONFIRMING
 * ones are watched again ({@linkcode TransactionEngine.resume}).
 *
 * @module
 */

import type { TransactionDeps } from "./deps.ts";
import {
  BadRequestError,
  ConflictError,
  isFinalTransactionStatus,
  nextMacrotask,
  NotFoundError,
} from "../../core/mod.ts";
import { transactionFault } from "../faults/apply.ts";
import {
  type ChainRequest,
  checkTransactionRequest,
  type MessageRequest,
} from "./request_check.ts";
import { pageCursor, type TransactionListQuery } from "./list_query.ts";
import { type SignedBytes, type TransactionRecord, TransactionStore } from "./store.ts";
import {
  CANCELLABLE_STATUSES,
  canFollow,
  defaultSubStatus,
  type EmulatorTransactionStatus,
  type ForceableStatus,
  HELD_STATUS,
  type StatusMoves,
  TransactionStateError,
} from "./status.ts";
import { Broadcaster } from "./broadcaster.ts";
import { nodeOf } from "../chain.ts";
import { Confirmations } from "./confirmations.ts";
import { signMessages } from "./message_signing.ts";
import { CustodyDelays } from "./custody_delays.ts";

/** What the engine uses of the emulator's context. */
export type EngineContext = Pick<
  TransactionDeps,
  "config" | "store" | "chain" | "keys" | "events" | "faults" | "log" | "now" | "uuid"
>;

/**
 * The lifecycle engine of one emulator.
 *
 * @example
 * ```ts
 * import type { EmulatorContext } from "../context.ts";
 * declare const ctx: EmulatorContext;
 * const assetId = ctx.config.assetId;
 * const destination = { type: "VAULT_ACCOUNT", id: "1" };
 * const engine = new TransactionEngine(ctx);
 * const t = engine.create({ operation: "TRANSFER", assetId, source: { type: "VAULT_ACCOUNT", id: "0" }, destination, amount: "0.1" });
 * ```
 */
export class TransactionEngine {
  readonly #ctx: EngineContext;
  readonly #store: TransactionStore;
  /** The stored transactions as the API returns them (changed only by the engine). */
  readonly records: Pick<TransactionStore, "record" | "recordJson" | "byExternalId">;
  readonly #broadcaster: Broadcaster;
  readonly #confirmations: Confirmations;
  readonly #delays: CustodyDelays;
  readonly #running = new Set<string>();
  #stopped = false;
  readonly #tasks = new Set<Promise<void>>();

  /** An engine over `ctx` (creates the transactions table when missing). */
  constructor(ctx: EngineContext) {
    this.#ctx = ctx;
    this.#store = new TransactionStore(ctx.store);
    this.records = this.#store;
    this.#delays = new CustodyDelays({
      store: ctx.store,
      now: () => ctx.now(),
      log: (line) => ctx.log(line),
      approval: ctx.config.approvalDelay,
      signing: ctx.config.signingDelay,
    });
    const moves: StatusMoves = {
      move: (id, status, patch, signed) => this.#move(id, status, patch, signed),
      fail: (id, subStatus, description, fields) => this.#fail(id, subStatus, description, fields),
      statusOf: (id) => this.#store.record(id)?.status,
    };
    const stopped = () => this.#stopped;
    this.#confirmations = new Confirmations({
      client: () => nodeOf(ctx).client,
      moves,
      record: (id) => this.#store.record(id),
      log: (line) => ctx.log(line),
      stopped,
    });
    this.#broadcaster = new Broadcaster({
      ctx,
      moves,
      receipt: (hash) => this.#confirmations.receipt(hash),
      stopped,
    });
  }

  // ---- reading -------------------------------------------------------------

  /**
   * One page of a listing (`list_query.ts`), with the cursors of the pages
   * after (`next`) and before (`prev`) it when there are rows there.
   */
  list(
    query: TransactionListQuery,
  ): { records: TransactionRecord[]; next?: string; prev?: string } {
    const { filter, filterQuery, page } = query;
    const { records, more, edges } = this.#store.page(filter, page);
    if (!edges) return { records };
    // rows beyond the page in the direction read: `more`; on the other side: there are
    // some whenever this page was reached from a cursor
    const hasNext = page?.direction === "prev" ? true : more;
    const hasPrev = page === undefined ? false : page.direction === "next" ? true : more;
    return {
      records,
      next: hasNext ? pageCursor(filterQuery, "next", edges[1]) : undefined,
      prev: hasPrev ? pageCursor(filterQuery, "prev", edges[0]) : undefined,
    };
  }

  // ---- creation ------------------------------------------------------------

  /**
   * Checks and stores a new transaction (SUBMITTED), emits
   * `transaction.created`, and starts its walk. Throws a 400
   * `BadRequestError` for a bad request, `ConflictError` for a reused `externalTxId`.
   * `createdBy`: the id of the API user who asked (the record's `createdBy`).
   */
  create(body: unknown, createdBy?: string): TransactionRecord {
    const { request, record, externalTxId } = checkTransactionRequest(this.#ctx, body);
    if (createdBy !== undefined) record.createdBy = createdBy;
    if (externalTxId && this.#store.byExternalId(externalTxId)) {
      throw new ConflictError(
        `externalTxId "${externalTxId}" was already used by another transaction; it must be unique.`,
      );
    }
    // created_at is the record's createdAt, the one instant the filters and the answer share
    this.#store.insert({ record, request, externalTxId, at: Number(record.createdAt) });
    this.#ctx.events.emit({
      eventType: "transaction.created",
      resourceId: record.id,
      data: record,
    });
    this.#schedule(record.id);
    return record;
  }

  // ---- the one place where a status changes --------------------------------

  #move(
    id: string,
    status: EmulatorTransactionStatus,
    patch: Partial<TransactionRecord> = {},
    signed?: SignedBytes,
  ): TransactionRecord {
    const stored = this.#store.find(id);
    if (!stored) throw new TransactionStateError(`Transaction "${id}" vanished from the store.`);
    const before = stored.record;
    // ended (e.g. forced through admin while the walk was busy): never changes again
    if (isFinalTransactionStatus(before.status)) return before;
    if (!canFollow(before.status, status)) {
      throw new TransactionStateError(
        `Transaction "${id}" cannot go from ${before.status} to ${status}.`,
      );
    }
    const now = this.#ctx.now();
    const record = { ...before, ...patch, status, lastUpdated: now } as TransactionRecord;
    this.#store.update(record, signed ?? { raw: stored.raw, nonce: stored.nonce }, now);
    this.#delays.moved(id, status);
    if (record.status !== before.status || record.subStatus !== before.subStatus) {
      this.#ctx.events.emit({
        eventType: "transaction.status.updated",
        resourceId: id,
        data: record,
      });
    }
    return record;
  }

  #fail(
    id: string,
    subStatus: string,
    description: string,
    fields: Partial<TransactionRecord> = {},
  ): void {
    this.#move(id, "FAILED", { ...fields, subStatus, errorDescription: description });
    this.#ctx.log(`transaction ${id} FAILED (${subStatus}): ${description}`);
  }

  // ---- the walk ------------------------------------------------------------

  #schedule(id: string): void {
    if (this.#stopped) return;
    // one event-loop turn, not `setTimeout(0)` (~2 ms in Deno 2.9, paid at every step of every walk)
    const task: Promise<void> = nextMacrotask()
      .then(() => this.#advance(id))
      .catch((e) => {
        this.#ctx.log(`transaction ${id}: internal error: ${(e as Error)?.stack ?? e}`);
        try {
          const t = this.#store.record(id);
          if (t && !isFinalTransactionStatus(t.status)) {
            this.#fail(id, "INTERNAL_ERROR", String((e as Error)?.message ?? e));
          }
        } catch { /* store closed */ }
      })
      .finally(() => this.#tasks.delete(task));
    this.#tasks.add(task);
  }

  /** One step of the walk of `id`, from wherever it is. */
  async #advance(id: string): Promise<void> {
    if (this.#running.has(id) || this.#stopped) return;
    this.#running.add(id);
    try {
      const stored = this.#store.find(id);
      if (!stored) return;
      let status = stored.record.status;
      let since = Number(stored.record.lastUpdated); // when it entered `status`
      const wake = () => this.#schedule(id);
      if (status === "SUBMITTED") {
        const fault = transactionFault(this.#ctx.faults);
        if (fault?.kind === "finalStatus") {
          this.#move(id, fault.status, { subStatus: fault.subStatus });
          return;
        }
        if (fault?.kind === "hold") {
          this.#move(id, HELD_STATUS);
          return;
        }
        status = this.#delays.approves ? HELD_STATUS : "PENDING_SIGNATURE";
        since = Number(this.#move(id, status).lastUpdated);
        this.#delays.startApproval(id, since); // nothing without an approval delay
      }
      if (status === HELD_STATUS) {
        // held by a fault: waits for the admin endpoint; an approval delay: until it ends
        if (!this.#delays.approvalOver(id, wake)) return;
        since = Number(this.#move(id, "PENDING_SIGNATURE").lastUpdated);
        status = "PENDING_SIGNATURE";
      }
      const req = stored.request;
      if (status === "PENDING_SIGNATURE") {
        if (!this.#delays.signingOver(id, since, wake)) return;
        if (req.kind === "message") await this.#signMessages(id, req);
        else await this.#send(id, req);
        return;
      }
      if (status === "BROADCASTING" && req.kind === "chain") {
        if (!stored.raw) {
          this.#move(id, "PENDING_SIGNATURE");
          await this.#send(id, req);
        } else if (await this.#broadcaster.resend(id, stored.raw, req.accountId)) {
          this.#confirmations.watch(id);
        }
        return;
      }
      if (status === "CONFIRMING") this.#confirmations.watch(id);
    } finally {
      this.#running.delete(id);
    }
  }

  /** Signs and sends the PENDING_SIGNATURE transaction `id`, then confirms it. */
  async #send(id: string, req: ChainRequest): Promise<void> {
    const sent = await this.#broadcaster.signAndSend(id, req);
    if (sent) await this.#confirmations.confirmNow(id, sent);
  }

  async #signMessages(id: string, req: MessageRequest): Promise<void> {
    const account = this.#ctx.keys.account(req.accountId);
    const signedMessages = await signMessages(account, req.accountId, req.messages);
    this.#move(id, "COMPLETED", { subStatus: "CONFIRMED", signedMessages });
  }

  // ---- admin ---------------------------------------------------------------

  #require(id: string): TransactionRecord {
    const t = this.#store.record(id);
    if (!t) throw new NotFoundError(`Transaction "${id}" not found.`);
    return t;
  }

  /** Lets a held (PENDING_AUTHORIZATION) transaction continue. */
  approve(id: string): TransactionRecord {
    const t = this.#require(id);
    if (t.status !== HELD_STATUS) {
      throw new BadRequestError(`Transaction "${id}" is ${t.status}, not ${HELD_STATUS}.`);
    }
    const out = this.#move(id, "PENDING_SIGNATURE");
    this.#schedule(id);
    return out;
  }

  /** Forces a final status on a transaction that has not ended yet. */
  force(id: string, status: ForceableStatus, subStatus?: string): TransactionRecord {
    const t = this.#require(id);
    if (isFinalTransactionStatus(t.status)) {
      throw new BadRequestError(`Transaction "${id}" already ended: ${t.status}.`);
    }
    this.#confirmations.forget(id);
    return this.#move(id, status, { subStatus: subStatus ?? defaultSubStatus(status) });
  }

  /** Cancels a transaction that was not signed yet. */
  cancel(id: string): void {
    const t = this.#require(id);
    if (!(CANCELLABLE_STATUSES as readonly string[]).includes(t.status)) {
      throw new BadRequestError(
        `Transaction "${id}" is ${t.status}: only a transaction not yet signed can be cancelled.`,
      );
    }
    this.#move(id, "CANCELLED", { subStatus: "CANCELLED_BY_USER" });
  }

  // ---- lifecycle -----------------------------------------------------------

  /** Resumes the walk of every unfinished transaction (after a restart). */
  resume(): void {
    const ids = this.#store.unfinishedIds();
    if (ids.length && !this.#ctx.chain) {
      this.#ctx.log(
        `${ids.length} unfinished transaction(s) wait for a node: restart with --rpcUrl`,
      );
      return;
    }
    for (const id of ids) this.#schedule(id);
    if (ids.length) this.#ctx.log(`resuming ${ids.length} unfinished transaction(s)`);
  }

  /** Stops the walk (unfinished transactions resume after a restart). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#delays.stop();
    await Promise.allSettled([...this.#tasks]);
    await this.#confirmations.idle();
  }
}
