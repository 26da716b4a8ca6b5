/**
 * The custody signer: `eth_accounts`, `eth_sendTransaction` and message
 * signing carried out as platform transactions.
 *
 * Sending is safe against every retry path: each transaction gets one
 * `Idempotency-Key` (reused by every retry of its create) and one unique
 * `externalTxId`; when a create's answer is lost (network error, timeout,
 * 5xx after retries) the transaction is looked up by its `externalTxId`
 * before anything is created again. Status polling starts fast and backs off;
 * final failures and the overall deadline become JSON-RPC errors that carry
 * the platform transaction id. Sends from one account run one at a time, in
 * the order they arrived, except that sends whose caller asked for a nonce
 * are created in nonce order (the platform numbers an account's transactions
 * in the order they are created).
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
import type { Signer } from "./methods.ts";
import { RpcError, RpcErrorCode, toRpcError } from "./protocol.ts";
import { parseQuantity } from "./units.ts";
import { toTransactionRequest } from "./transaction_request.ts";
import {
  DEFAULT_NONCE_QUIET_MS,
  NonceGate,
  type NonceTicket,
  StaleNonceError,
} from "./nonce_gate.ts";
import { WorkspaceDirectory } from "./workspace_directory.ts";
import { derivedExternalTxId, type SendIdentity, sendIdentity } from "./send_identity.ts";
import { SendBook, type SendWatch } from "./send_book.ts";
import { SendProgress } from "./send_progress.ts";

/** Options of {@linkcode CustodySigner}; defaults stated per field. */
export interface CustodyOptions {
  /** The platform client (one for the whole bridge). */
  client: PlatformClient;
  /** The chain's native asset id (e.g. `ETH_TEST5`). */
  assetId: string;
  /** The chain id, to check a caller's `chainId`. */
  chainId: bigint;
  /** Restricts the exposed accounts; default: every account holding `assetId`. */
  vaultAccountIds?: readonly string[];
  /** Prefix of each transaction's unique `externalTxId`; default `service-rpc-`. */
  externalTxIdPrefix?: string;
  /** Note attached to every transaction; default none. */
  note?: string;
  /** Fixed polling interval in ms; default adaptive ({@linkcode pollDelay}: 5 ms doubling to 2 s). */
  pollingIntervalMs?: number;
  /** Overall deadline of one transaction in ms; default 4 h (human approvals). */
  txTimeoutMs?: number;
  /**
   * Returns the account's next nonce on chain, pending included; optional.
   * Given, a caller's `nonce` is honoured: sends are created in nonce order
   * (see {@linkcode NonceGate}), a stale or repeated nonce is refused.
   */
  pendingNonce?: (address: string) => Promise<bigint>;
  /**
   * How long a send waits for an earlier nonce while no send of its account
   * arrives or finishes; default {@linkcode DEFAULT_NONCE_QUIET_MS} (10 s).
   */
  nonceQuietMs?: number;
  /** Logs status changes (`--verbose`). */
  log?: (line: string) => void;
  /** Logs each transaction's creation and status changes (`--logTransactionStatusChanges`); default `log`. */
  logStatus?: (line: string) => void;
  /** The fee level of a transaction that carries no fee fields; default MEDIUM. */
  feeLevel?: "LOW" | "MEDIUM" | "HIGH";
  /**
   * `false`: a destination must be known to the workspace (a vault account
   * or a whitelisted wallet, found by address) and is sent as that; an
   * unknown one is a JSON-RPC error naming it. Default true (any address, as
   * a one-time address).
   */
  oneTimeAddressesEnabled?: boolean;
  /** Clock; default `Date.now`. */
  now?: () => number;
  /** Sleeps; default a timer that the signal cancels. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Unique id source for `externalTxId`; default `crypto.randomUUID`. */
  uuid?: () => string;
  /**
   * Progress lines of sends that wait for custody (see `send_progress.ts`):
   * standard error unless `--quiet`; default none.
   */
  progress?: (line: string) => void;
  /** What a progress line says to run when a client gave up (read when said); default generic. */
  resumeHint?: () => string;
  /**
   * Whether a send without a nonce, repeated after its client gave up,
   * joins the earlier one (see `send_book.ts`); default true (`--joinRetries`).
   */
  joinRetries?: boolean;
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
const ambiguous = isRetryable;

/** Did a created transaction end in a final failure (so it will not land)? */
function finalFailure(e: unknown): boolean {
  const status = e instanceof RpcError
    ? (e.data as { status?: string } | undefined)?.status
    : undefined;
  return status !== undefined && isFailure(status);
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Signs and sends through the platform. */
export class CustodySigner implements Signer {
  readonly #o: CustodyOptions;
  readonly #now: () => number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #uuid: () => string;
  readonly #directory: WorkspaceDirectory;
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #gate: NonceGate | undefined;
  readonly #book: SendBook;
  /** Errors of sends that failed after their platform transaction was created. */
  readonly #afterCreate = new WeakSet<object>();
  /** The progress of each send under way. */
  readonly #underWay = new Set<SendProgress>();

  /** Builds a signer; nothing is fetched until the first call. */
  constructor(options: CustodyOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? abortableSleep;
    this.#uuid = options.uuid ?? (() => crypto.randomUUID());
    this.#directory = new WorkspaceDirectory({ ...options, now: this.#now });
    this.#gate = options.pendingNonce
      ? new NonceGate({
        pendingNonce: options.pendingNonce,
        quietMs: options.nonceQuietMs ?? DEFAULT_NONCE_QUIET_MS,
        log: options.log,
      })
      : undefined;
    this.#book = new SendBook({
      joinAbandoned: options.joinRetries ?? true,
      createdBy: (e) => typeof e === "object" && e !== null && this.#afterCreate.has(e),
      now: this.#now,
    });
  }

  /** The exposed addresses in vault-account order. */
  async accounts(signal?: AbortSignal): Promise<string[]> {
    try {
      return (await this.#directory.exposed(signal)).map((a) => a.address);
    } catch (e) {
      throw toRpcError(e);
    }
  }

  /**
   * `eth_sendTransaction`: resolves with the transaction hash. A request
   * identical to a send under way joins it (see `send_book.ts`);
   * `clientGone` is aborted when the client that asked has gone.
   */
  async sendTransaction(
    tx: Record<string, unknown>,
    signal?: AbortSignal,
    clientGone?: AbortSignal,
  ): Promise<string> {
    try {
      let from = tx.from;
      if (from === undefined || from === null) {
        // Like a node with one unlocked account: the only exposed account is the default.
        const all = await this.#directory.exposed(signal);
        if (all.length === 1) from = all[0].address;
      }
      if (typeof from !== "string" || !ADDRESS.test(from)) {
        throw new RpcError(
          RpcErrorCode.invalidParams,
          'eth_sendTransaction: "from" must be the address of an exposed vault account (it may be left out only when exactly one is exposed).',
        );
      }
      const body: TransactionRequest = toTransactionRequest(tx, {
        assetId: this.#o.assetId,
        chainId: this.#o.chainId,
        note: this.#o.note,
        feeLevel: this.#o.feeLevel,
      });
      const nonce = tx.nonce === undefined || tx.nonce === null
        ? undefined
        : parseQuantity(tx.nonce, "nonce");
      const identity = sendIdentity(this.#o.chainId, from, nonce, body);
      return await this.#book.send(
        identity,
        clientGone,
        (watch) => this.#send(identity, body, watch, signal),
      );
    } catch (e) {
      throw toRpcError(e);
    }
  }

  /** One send of the book: reports its progress, and marks a failure after its creation. */
  async #send(
    identity: SendIdentity,
    body: TransactionRequest,
    watch: SendWatch,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const progress = this.#progress(
      `${identity.nonce === undefined ? "" : `nonce ${identity.nonce} `}from ${identity.from}`,
    );
    watch.onAllGone = () => progress?.allGone();
    watch.onJoin = () => progress?.joined();
    if (progress) this.#underWay.add(progress);
    let created = false;
    try {
      const hash = await this.#sendNow(identity, body, signal, progress, () => created = true);
      progress?.finished(hash);
      return hash;
    } catch (e) {
      const error = toRpcError(e);
      if (created) this.#afterCreate.add(error);
      progress?.failed(error.message);
      throw error;
    } finally {
      if (progress) this.#underWay.delete(progress);
    }
  }

  /**
   * One line per send still under way (for the bridge to print when it
   * stops: the transactions go on on the platform); none without `progress`.
   */
  unfinished(): string[] {
    return [...this.#underWay].map((p) => p.unfinished());
  }

  #progress(label: string): SendProgress | undefined {
    const write = this.#o.progress;
    return write
      ? new SendProgress(label, { write, now: this.#now, resumeHint: this.#o.resumeHint })
      : undefined;
  }

  /** Resolves the send's source and destination and sends it in its account's order. */
  async #sendNow(
    identity: SendIdentity,
    body: TransactionRequest,
    signal: AbortSignal | undefined,
    progress: SendProgress | undefined,
    onCreated: () => void,
  ): Promise<string> {
    const dest = body.destination;
    if (
      this.#o.oneTimeAddressesEnabled === false && dest?.type === "ONE_TIME_ADDRESS" &&
      dest.oneTimeAddress.address !== "0x0"
    ) {
      const known = await this.#directory.destinationOf(dest.oneTimeAddress.address, signal);
      body.destination = { type: known.type, id: known.id };
    }
    const from = identity.from;
    const vaultId = await this.#directory.vaultOf(from, signal);
    body.source = { type: "VAULT_ACCOUNT", id: vaultId };
    const derive = identity.nonce === undefined ? undefined : identity;
    const run = (created: () => void) =>
      this.#run(
        body,
        signal,
        (t) => !!t.txHash,
        undefined,
        () => {
          created();
          onCreated();
        },
        derive,
        progress,
      );
    if (identity.nonce === undefined || !this.#gate) {
      const gate = this.#gate;
      return await this.#serialized(vaultId, async () => {
        // The nonce the platform will give it, so that a later send asking for that one is
        // refused rather than landing with the next (see NonceGate.took).
        // (A node that cannot tell does not stop the send: it is then not counted.)
        const next = gate ? await gate.nextNonce(vaultId, from).catch(() => undefined) : undefined;
        let created = false;
        try {
          const done = await run(() => created = true);
          if (next !== undefined) gate!.took(vaultId, next);
          return done.txHash!;
        } catch (e) {
          // created and possibly landing: its nonce counts as taken
          if (next !== undefined && (created ? !finalFailure(e) : ambiguous(e))) {
            gate!.took(vaultId, next);
          }
          throw e;
        } finally {
          gate?.notify(vaultId);
        }
      });
    }
    return await this.#sendInOrder(
      vaultId,
      this.#gate.claim(vaultId, from, identity.nonce),
      run,
      identity,
      signal,
      progress,
      onCreated,
    );
  }

  /**
   * Sends a transaction whose caller asked for a nonce: created only when
   * that nonce is the account's next one (see {@linkcode NonceGate}), so it
   * lands with the nonce asked for even when a later nonce arrived first.
   * When the chain has already used the nonce, the platform transaction of
   * the same send made by another bridge process (its derived `externalTxId`)
   * is followed instead, if there is one.
   */
  async #sendInOrder(
    vaultId: string,
    ticket: NonceTicket,
    run: (created: () => void) => Promise<Transaction>,
    identity: SendIdentity,
    signal: AbortSignal | undefined,
    progress: SendProgress | undefined,
    onCreated: () => void,
  ): Promise<string> {
    let created = false;
    let keep = false;
    try {
      for (;;) {
        const hash = await this.#serialized(vaultId, async () => {
          let stale: StaleNonceError | undefined;
          try {
            if (await ticket.check() === "wait") return undefined;
          } catch (e) {
            if (!(e instanceof StaleNonceError)) throw e;
            stale = e;
          }
          try {
            if (stale) {
              // Used on chain: by this very send, made earlier by another bridge process?
              const existing = await this.#findEarlier(identity, signal);
              if (!existing) throw stale;
              this.#o.log?.(
                `nonce ${identity.nonce} of ${identity.from} was used by platform transaction ${existing.id} (${existing.externalTxId}), the same send made earlier: following it`,
              );
              created = true;
              onCreated();
              return (await this.#follow(
                existing.id,
                existing.externalTxId,
                this.#deadline(),
                signal,
                (t) => !!t.txHash,
                TRANSACTION_SENT_STATUSES,
                progress,
              )).txHash!;
            }
            return (await run(() => created = true)).txHash!;
          } finally {
            this.#gate!.notify(vaultId);
          }
        });
        if (hash !== undefined) {
          ticket.sent();
          keep = true;
          return hash;
        }
        await ticket.park(signal);
      }
    } catch (e) {
      keep = created ? !finalFailure(e) : ambiguous(e); // it may still land: the nonce stays taken
      throw e;
    } finally {
      if (!keep) ticket.release();
    }
  }

  /**
   * The platform transaction of `identity` made earlier (by another bridge
   * process) and not failed, found by its derived `externalTxId`s.
   */
  async #findEarlier(
    identity: SendIdentity,
    signal: AbortSignal | undefined,
  ): Promise<{ id: string; externalTxId: string } | undefined> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const externalTxId = await derivedExternalTxId(this.#prefix(), identity, attempt);
      const found = await findTransactionByExternalId(this.#o.client, externalTxId, signal);
      if (!found) return undefined;
      if (!isFailure(found.status)) return { id: found.id, externalTxId };
    }
    return undefined;
  }

  /** EIP-191 (`personal_sign`, `eth_sign`): the 65-byte signature as hex. */
  async signMessage(address: string, dataHex: string, signal?: AbortSignal): Promise<string> {
    return await this.#sign(address, {
      content: dataHex.slice(2),
      index: 0,
      type: "ETH_MESSAGE",
    }, signal);
  }

  /** EIP-712 (`eth_signTypedData*`): the 65-byte signature as hex. */
  async signTypedData(address: string, typedData: unknown, signal?: AbortSignal): Promise<string> {
    return await this.#sign(address, { content: typedData, index: 0, type: "EIP712" }, signal);
  }

  async #sign(address: string, message: Record<string, unknown>, signal?: AbortSignal) {
    try {
      const vaultId = await this.#directory.vaultOf(address, signal);
      const body: TransactionRequest = {
        operation: "TYPED_MESSAGE",
        assetId: this.#o.assetId,
        source: { type: "VAULT_ACCOUNT", id: vaultId },
        extraParameters: { rawMessageData: { messages: [message] } },
      };
      if (this.#o.note) body.note = this.#o.note;
      const done = await this.#run(
        body,
        signal,
        (t) => t.status === "COMPLETED" && !!t.signedMessages?.length,
        ["COMPLETED"],
        undefined,
        undefined,
        this.#progress(`message signed by ${address}`),
      );
      return signatureHex(done);
    } catch (e) {
      throw toRpcError(e);
    }
  }

  /** Runs `task` after every earlier task of the same account has finished. */
  #serialized<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(key) ?? Promise.resolve();
    const run = previous.catch(() => {}).then(task);
    const tail = run.catch(() => {});
    this.#queues.set(key, tail);
    tail.then(() => {
      if (this.#queues.get(key) === tail) this.#queues.delete(key);
    });
    return run;
  }

  #prefix(): string {
    return this.#o.externalTxIdPrefix ?? "service-rpc-";
  }

  #deadline(): number {
    return this.#now() + (this.#o.txTimeoutMs ?? DEFAULT_TX_TIMEOUT_MS);
  }

  /**
   * Creates the transaction exactly once and polls it to a final state.
   * With `derive` (a send whose caller gave a nonce) its `externalTxId`
   * comes from the send's identity, so another bridge process finds it.
   */
  async #run(
    body: TransactionRequest,
    signal: AbortSignal | undefined,
    succeeded: (t: Transaction) => boolean,
    successStatuses: readonly string[] = TRANSACTION_SENT_STATUSES,
    onCreated?: () => void,
    derive?: SendIdentity,
    progress?: SendProgress,
  ): Promise<Transaction> {
    const deadline = this.#deadline();
    const { id, externalTxId } = await this.#create(body, derive, deadline, signal);
    onCreated?.();
    return await this.#follow(
      id,
      externalTxId,
      deadline,
      signal,
      succeeded,
      successStatuses,
      progress,
    );
  }

  /** Polls the platform transaction `id` until it succeeded or failed, or the deadline. */
  async #follow(
    id: string,
    externalTxId: string,
    deadline: number,
    signal: AbortSignal | undefined,
    succeeded: (t: Transaction) => boolean,
    successStatuses: readonly string[],
    progress: SendProgress | undefined,
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
      if (successStatuses.includes(t.status) && succeeded(t)) return t;
      progress?.status(t.status);
      if (isFailure(t.status)) {
        const rejected = t.status === "REJECTED" || t.status === "CANCELLED";
        throw new RpcError(
          rejected ? RpcErrorCode.userRejected : RpcErrorCode.server,
          `Platform transaction ${id} ended ${t.status}${t.subStatus ? ` (${t.subStatus})` : ""}.`,
          { txId: id, status: t.status, subStatus: t.subStatus ?? undefined, externalTxId },
        );
      }
      if (t.status === "COMPLETED" && !succeeded(t)) {
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
   * `derive`, an `externalTxId` already used by a failed transaction of the
   * same send (an earlier attempt, rejected or cancelled) moves on to the
   * send's next attempt; one used by a live transaction is that transaction.
   */
  async #create(
    body: TransactionRequest,
    derive: SendIdentity | undefined,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<{ id: string; externalTxId: string }> {
    const client = this.#o.client;
    let attempt = 1;
    let externalTxId = derive
      ? await derivedExternalTxId(this.#prefix(), derive, attempt)
      : `${this.#prefix()}${this.#uuid()}`;
    let key = client.newIdempotencyKey();
    const lostFor = new Set<string>(); // ids whose create may have happened unheard
    for (let retry = 0;; retry++) {
      try {
        const created = await createTransaction(client, { ...body, externalTxId }, {
          idempotencyKey: key,
          signal,
        });
        this.#log(
          `platform transaction ${created.id} created (${body.operation}, externalTxId ${externalTxId})`,
        );
        return { id: created.id, externalTxId };
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
        if (
          found && derive && duplicate && !lostFor.has(externalTxId) &&
          isFailure(found.status) && attempt < MAX_ATTEMPTS
        ) {
          // An earlier attempt of this send, not this call's, failed: asked again, it is a new one.
          attempt++;
          externalTxId = await derivedExternalTxId(this.#prefix(), derive, attempt);
          key = client.newIdempotencyKey();
          continue;
        }
        if (found) {
          this.#o.log?.(
            `create of ${externalTxId} answered ${
              e instanceof Error ? e.name : "an error"
            }, but the platform has it: ${found.id}`,
          );
          return { id: found.id, externalTxId };
        }
        if (!lost) throw e;
        if (this.#now() >= deadline) throw e;
        await this.#sleep(Math.min(8000, 250 * 2 ** retry), signal);
      }
    }
  }

  #log(line: string): void {
    (this.#o.logStatus ?? this.#o.log)?.(line);
  }
}

/** Attempts of one send (derived `externalTxId`s) looked at before giving up. */
const MAX_ATTEMPTS = 50;

/** Whether a transaction status is a final failure. */
function isFailure(status: string): boolean {
  return (TRANSACTION_FAILURE_STATUSES as readonly string[]).includes(status);
}

/** `0x` + r + s + v (27/28) from a signed message. */
export function signatureHex(t: Transaction): string {
  const sig = t.signedMessages?.[0]?.signature;
  if (sig?.r && sig.s && sig.v !== undefined) {
    const r = sig.r.replace(/^0x/, "").padStart(64, "0");
    const s = sig.s.replace(/^0x/, "").padStart(64, "0");
    const v = sig.v < 27 ? 27 + sig.v : sig.v;
    return `0x${r}${s}${v.toString(16).padStart(2, "0")}`;
  }
  if (sig?.fullSig) {
    const full = sig.fullSig.replace(/^0x/, "");
    if (full.length === 130) return `0x${full}`;
  }
  throw new RpcError(
    RpcErrorCode.server,
    `Platform transaction ${t.id} completed without a usable signature.`,
    { txId: t.id },
  );
}
