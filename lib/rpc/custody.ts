/**
 * The custody signer: `eth_accounts`, `eth_sendTransaction` and message
 * signing carried out as platform transactions.
 *
 * What is sent and in which order: a repeated send joins the one under way
 * (`send_book.ts`); each platform transaction is created at most once and
 * followed to its end by `platform_transaction.ts`. Sends from one account
 * run one at a time, in
 * the order they arrived, except that sends whose caller asked for a nonce
 * are created in nonce order (the platform numbers an account's transactions
 * in the order they are created).
 *
 * @module
 */

import type { Transaction, TransactionRequest } from "../platform/mod.ts";
import { type Adoption, SendSlots, type SendSlotsOptions } from "./send_slot.ts";
import type { Signer } from "./methods.ts";
import { ADDRESS, RpcError, RpcErrorCode, toRpcError } from "./protocol.ts";
import { parseQuantity, toTransactionRequest } from "./transaction_request.ts";
import {
  DEFAULT_NONCE_QUIET_MS,
  NonceGate,
  type NonceTicket,
  StaleNonceError,
} from "./nonce_gate.ts";
import { WorkspaceDirectory } from "./workspace_directory.ts";
import { type SendIdentity, sendIdentity } from "./send_identity.ts";
import {
  ambiguous,
  isFailure,
  type PlatformTransactionOptions,
  PlatformTransactions,
} from "./platform_transaction.ts";
import { SendBook, type SendClient, type SendWatch } from "./send_book.ts";
import { SendProgress } from "./send_progress.ts";

/**
 * Options of {@linkcode CustodySigner} (with those of the platform
 * transactions it runs and of the slot rule); defaults stated per field.
 */
export interface CustodyOptions extends PlatformTransactionOptions, SendSlotsOptions {
  /** The chain's native asset id (e.g. `ETH_TEST5`). */
  assetId: string;
  /** The chain id, to check a caller's `chainId`. */
  chainId: bigint;
  /** Restricts the exposed accounts; default: every account holding `assetId`. */
  vaultAccountIds?: readonly string[];
  /** Note attached to every transaction; default none. */
  note?: string;
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
  /** The fee level of a transaction that carries no fee fields; default MEDIUM. */
  feeLevel?: "LOW" | "MEDIUM" | "HIGH";
  /**
   * `false`: a destination must be known to the workspace (a vault account
   * or a whitelisted wallet, found by address) and is sent as that; an
   * unknown one is a JSON-RPC error naming it. Default true (any address, as
   * a one-time address).
   */
  oneTimeAddressesEnabled?: boolean;
  /**
   * Progress lines of sends that wait for custody (see `send_progress.ts`):
   * standard error unless `--quiet`; default none.
   */
  progress?: (line: string) => void;
  /**
   * What the bridge says, once, when it stops with sends under way whose
   * clients gave up: how to pick the work up again (`forge script
   * --resume`), given the first platform transaction not yet sent (to wait
   * for); undefined: nothing beyond each send's line. Read when said.
   */
  resumeHint?: (waitFor: string | undefined) => string | undefined;
  /** The platform is the emulator in this process (`rpc --emulator`): it stops with the bridge. */
  platformInProcess?: boolean;
  /**
   * Whether a send without a nonce, repeated after its client gave up,
   * joins the earlier one (see `send_book.ts`); default true (`--joinRetries`).
   */
  joinRetries?: boolean;
}

/** Can a send that failed with `e` land? Once created, unless failed for good; else if unheard. */
function mayLand(created: boolean, e: unknown): boolean {
  if (!created) return ambiguous(e);
  const status = (e as { data?: { status?: unknown } } | null)?.data?.status;
  return !(e instanceof RpcError && typeof status === "string" && isFailure(status));
}

/** How many slots' platform transactions a bridge remembers to name in a refusal: 10,000. */
const SLOTS_KEPT = 10_000;

/**
 * Signs and sends through the platform. What it throws (its own JSON-RPC
 * errors, the platform's) the dispatcher answers through `toRpcError`.
 */
export class CustodySigner implements Signer {
  readonly #o: CustodyOptions;
  readonly #now: () => number;
  readonly #tx: PlatformTransactions;
  readonly #directory: WorkspaceDirectory;
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #gate: NonceGate | undefined;
  readonly #book: SendBook;
  /** Errors of sends that failed after their platform transaction was created. */
  readonly #afterCreate = new WeakSet<object>();
  /** The progress of each send under way. */
  readonly #underWay = new Set<SendProgress>();
  readonly #slots: SendSlots;
  /** Per vault: the transactions in flight without a nonce when its next nonce was last judged. */
  readonly #inFlight = new Map<string, Transaction[]>();
  /**
   * The platform transaction of each slot this bridge created or joined (for refusals), the
   * latest {@linkcode SLOTS_KEPT}.
   */
  readonly #slotTx = new Map<string, string>();

  /** Builds a signer; nothing is fetched until the first call. */
  constructor(options: CustodyOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#tx = new PlatformTransactions({ ...options, now: this.#now });
    this.#directory = new WorkspaceDirectory({ ...options, now: this.#now });
    this.#slots = new SendSlots(options);
    const chainNonce = options.pendingNonce;
    this.#gate = chainNonce
      ? new NonceGate({
        // The nonce a send created now gets: the chain's next (pending included), after every
        // transaction of the vault in flight on the platform without a nonce yet (another
        // bridge's, another tool's): the platform numbers them first.
        pendingNonce: async (address) => {
          const chain = await chainNonce(address);
          const vaultId = await this.#directory.vaultOf(address);
          const inFlight = await this.#slots.inFlight(vaultId, options.assetId);
          this.#inFlight.set(vaultId, inFlight);
          return chain + BigInt(inFlight.length);
        },
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
    return (await this.#directory.exposed(signal)).map((a) => a.address);
  }

  /**
   * `eth_sendTransaction`: resolves with the transaction hash. A request
   * identical to a send under way joins it (see `send_book.ts`);
   * `client` tells when the client that asked has gone.
   */
  async sendTransaction(
    tx: Record<string, unknown>,
    signal?: AbortSignal,
    client?: SendClient,
  ): Promise<string> {
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
    const nonce = tx.nonce == null ? undefined : parseQuantity(tx.nonce, "nonce");
    const identity = sendIdentity(this.#o.chainId, from, nonce, body);
    return await this.#book.send(
      identity,
      client,
      (watch) => this.#send(identity, body, watch, signal),
    );
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
      identity.nonce !== undefined,
    );
    watch.onAllGone = () => progress?.allGone();
    watch.onJoin = () => progress?.joined();
    if (progress) this.#underWay.add(progress);
    let txId: string | undefined;
    try {
      const hash = await this.#sendNow(identity, body, signal, progress, (id) => {
        txId = id;
        progress?.created(id);
      });
      progress?.finished(hash);
      return hash;
    } catch (e) {
      let error = toRpcError(e);
      const stopping = signal?.aborted === true;
      if (stopping && txId !== undefined) {
        // The bridge stops under the send: the client it cuts off learns which transaction it was.
        error = new RpcError(
          error.code,
          `${error.message} Platform transaction ${txId} ${
            this.#o.platformInProcess
              ? "stops with the bridge's in-process emulator"
              : "continues on the platform"
          }.`,
          { txId },
        );
      }
      if (txId !== undefined) this.#afterCreate.add(error);
      if (!stopping) progress?.failed(error.message); // else the bridge's stop line says it
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
    const under = [...this.#underWay];
    const lines = under.map((p) => p.unfinished());
    // Once: how to pick the work up again (forge --resume), and which transaction to wait for.
    const resumable = under.filter((p) => p.txId !== undefined && p.mode.nonce);
    if (resumable.length && !this.#o.platformInProcess) {
      const advice = this.#o.resumeHint?.(resumable.find((p) => !p.sent)?.txId);
      if (advice) lines.push(advice);
    }
    return lines;
  }

  #progress(label: string, nonce = false): SendProgress | undefined {
    const write = this.#o.progress;
    return write
      ? new SendProgress(label, {
        write,
        now: this.#now,
        mode: {
          nonce,
          joins: this.#o.joinRetries ?? true,
          platformInProcess: this.#o.platformInProcess ?? false,
        },
      })
      : undefined;
  }

  /** Resolves the send's source and destination and sends it in its account's order. */
  async #sendNow(
    identity: SendIdentity,
    body: TransactionRequest,
    signal: AbortSignal | undefined,
    progress: SendProgress | undefined,
    onCreated: (id: string) => void,
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
    const adopt = identity.nonce === undefined ? undefined : this.#slots.adoption(identity, body);
    const run = (created: () => void) =>
      this.#tx.run(body, signal, "hash", progress, adopt, async (id, adopted) => {
        created();
        onCreated(id);
        if (identity.slot !== undefined) this.#holds(identity.slot, id);
        if (adopt && !adopted) {
          const before = this.#inFlight.get(vaultId) ?? [];
          await this.#slots.notRaced(id, before, vaultId, this.#o.assetId, identity);
        }
      });
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
          if (next !== undefined && mayLand(created, e)) gate!.took(vaultId, next);
          throw e;
        } finally {
          gate?.notify(vaultId);
        }
      });
    }
    let ticket: NonceTicket;
    try {
      ticket = this.#gate.claim(vaultId, from, identity.nonce);
    } catch (e) {
      // The slot is this bridge's already, for another transfer (the same one joined it).
      const holder = identity.slot === undefined ? undefined : this.#slotTx.get(identity.slot);
      if (!(e instanceof RpcError) || holder === undefined) throw e;
      throw new RpcError(
        e.code,
        `${e.message} It is held by platform transaction ${holder}, for another transfer (a request joins it only with the same destination, value and data).`,
        { txId: holder },
      );
    }
    return await this.#sendInOrder(vaultId, ticket, run, adopt!, signal, progress, onCreated);
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
    adopt: Adoption,
    signal: AbortSignal | undefined,
    progress: SendProgress | undefined,
    onCreated: (id: string) => void,
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
              // Taken (on chain, or by a transaction in flight): by this very send, made earlier
              // by another bridge process? (Proven, or refused naming what holds the slot.)
              const identity = adopt.identity;
              const existing = await this.#tx.findEarlier(adopt, signal);
              if (!existing) throw this.#staleWithHolders(stale, vaultId);
              this.#o.log?.(
                `nonce ${identity.nonce} of ${identity.from} is held by platform transaction ${existing.id} (${existing.externalTxId}), proven to be the same send made earlier: following it`,
              );
              created = true;
              onCreated(existing.id);
              if (identity.slot !== undefined) this.#holds(identity.slot, existing.id);
              const done = await this.#tx.follow(existing, signal, "hash", progress);
              await adopt.landed(done, signal);
              return done.txHash!;
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
      keep = mayLand(created, e); // it may still land: the nonce stays taken
      throw e;
    } finally {
      if (!keep) ticket.release();
    }
  }

  /** Notes that platform transaction `id` holds `slot` (the oldest note goes past the bound). */
  #holds(slot: string, id: string): void {
    this.#slotTx.delete(slot);
    this.#slotTx.set(slot, id);
    if (this.#slotTx.size > SLOTS_KEPT) this.#slotTx.delete(this.#slotTx.keys().next().value!);
  }

  /** A stale nonce's error, naming the transactions in flight that take the nonces before. */
  #staleWithHolders(stale: StaleNonceError, vaultId: string): StaleNonceError {
    const inFlight = this.#inFlight.get(vaultId) ?? [];
    if (inFlight.length === 0) return stale;
    const ids = inFlight.map((t) => t.id);
    return new StaleNonceError(
      `${stale.message} Counted in that: platform transaction${ids.length > 1 ? "s" : ""} ${
        ids.join(", ")
      } of this account, in flight on the platform without a nonce yet (they take the next nonces).`,
      { inFlight: ids },
    );
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
    const vaultId = await this.#directory.vaultOf(address, signal);
    const body: TransactionRequest = {
      operation: "TYPED_MESSAGE",
      assetId: this.#o.assetId,
      source: { type: "VAULT_ACCOUNT", id: vaultId },
      extraParameters: { rawMessageData: { messages: [message] } },
    };
    if (this.#o.note) body.note = this.#o.note;
    const progress = this.#progress(`message signed by ${address}`);
    const done = await this.#tx.run(body, signal, "signature", progress);
    return signatureHex(done);
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
