/**
 * The order of callers' explicit nonces, per account.
 *
 * Custody assigns nonces: the platform gives each transaction of an account
 * the next nonce in the order the transactions are created. A caller that
 * asks for nonces itself (forge broadcasting a script: n, n+1, n+2 at once)
 * must therefore have its transactions created in nonce order, whatever order
 * its requests arrive in. The gate holds a send whose nonce is ahead of the
 * account's next one until the earlier nonces have been sent (a gap that
 * nobody fills while the account's sends are quiet for a while is refused:
 * the platform would give the send the next nonce, not the one asked for),
 * refuses a nonce this bridge
 * has already sent or is sending (exactly once), and refuses a nonce the
 * chain has already used (a truly stale one). Sends that ask for no nonce are
 * counted too ({@linkcode NonceGate.took}): the nonce the platform gave one is
 * refused to a later send that asks for it, even when the node read for the
 * account's next nonce lags behind the platform.
 *
 * @module
 */

import { RpcError, RpcErrorCode } from "./protocol.ts";

/**
 * A nonce the chain has already used (`nonce too low`). The signer looks for
 * the platform transaction of the same send (made by another bridge process)
 * before passing it on.
 */
export class StaleNonceError extends RpcError {
  /** A -32000 `nonce too low` error with `message` (and `data`, if any). */
  constructor(message: string, data?: unknown) {
    super(RpcErrorCode.server, message, data);
    this.name = "StaleNonceError";
  }
}

/** Options of {@linkcode NonceGate}; defaults stated per field. */
export interface NonceGateOptions {
  /** The account's next nonce on chain, pending transactions included. */
  pendingNonce: (address: string) => Promise<bigint>;
  /**
   * How long a send that waits for an earlier nonce waits without any send
   * of its account arriving or finishing before it is refused (it would land
   * at the account's next nonce, not at its own); default 10 s (a script's
   * sends arrive within milliseconds; a busy machine may hold one back for
   * seconds).
   */
  quietMs?: number;
  /** Logs a send that waits or gives up waiting (`--verbose`). */
  log?: (line: string) => void;
}

/** Default of {@linkcode NonceGateOptions.quietMs}. */
export const DEFAULT_NONCE_QUIET_MS = 10_000;

/** What the gate knows of one account in this run. */
interface Lane {
  /** Nonces asked for by sends that are waiting, being sent or were sent. */
  readonly claimed: Set<bigint>;
  /** One past the highest nonce this run sent with the nonce asked for. */
  after: bigint;
  /** Wakes the waiting sends of the account. */
  readonly waiting: Set<() => void>;
}

/**
 * Orders the explicit nonces of each account. A send asks {@linkcode claim}
 * for a ticket, then, inside its account's one-at-a-time queue, asks the
 * ticket whether to `send` now or `wait`; when waiting it leaves the queue,
 * {@linkcode NonceTicket.park}s, and asks again.
 *
 * @example
 * ```ts
 * const gate = new NonceGate({ pendingNonce: async () => 0n });
 * const ticket = gate.claim("0", "0xf39F…", 1n);
 * await ticket.check(); // "wait": nonce 0 has not been sent yet
 * ```
 */
export class NonceGate {
  readonly #o: NonceGateOptions;
  readonly #lanes = new Map<string, Lane>();

  /** A gate with no account known. */
  constructor(options: NonceGateOptions) {
    this.#o = options;
  }

  /**
   * Takes `nonce` of `address` (account `key`) for one send; refuses a
   * nonce this run is already sending or has sent.
   */
  claim(key: string, address: string, nonce: bigint): NonceTicket {
    const lane = this.#lane(key);
    if (lane.claimed.has(nonce)) {
      throw new RpcError(
        RpcErrorCode.server,
        `nonce too low: nonce ${nonce} of ${address} was already sent through this bridge (or is being sent); custody sends each transaction once and cannot replace it.`,
      );
    }
    lane.claimed.add(nonce);
    this.notify(key); // a new send of the account is activity too: the waiting ones look again
    return new NonceTicket(this.#o, lane, address, nonce);
  }

  /**
   * For a send that asks for no nonce (the platform numbers it), inside its account's queue:
   * the nonce it will get (the account's next one, as {@linkcode NonceTicket.check} judges
   * it). Call {@linkcode took} once it was created, so that a later send asking for that nonce
   * is refused instead of landing with the next one.
   */
  async nextNonce(key: string, address: string): Promise<bigint> {
    const chain = await this.#o.pendingNonce(address);
    const after = this.#lanes.get(key)?.after ?? 0n;
    return chain > after ? chain : after;
  }

  /** A send of account `key` that asked for no nonce was created and got `nonce`. */
  took(key: string, nonce: bigint): void {
    const lane = this.#lane(key);
    lane.claimed.add(nonce);
    if (nonce + 1n > lane.after) lane.after = nonce + 1n;
  }

  #lane(key: string): Lane {
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { claimed: new Set(), after: 0n, waiting: new Set() };
      this.#lanes.set(key, lane);
    }
    return lane;
  }

  /** A send of account `key` finished (sent or not): its waiting sends look again. */
  notify(key: string): void {
    const lane = this.#lanes.get(key);
    if (!lane) return;
    for (const wake of [...lane.waiting]) wake();
  }
}

/** One send's hold on its nonce; see {@linkcode NonceGate}. */
export class NonceTicket {
  readonly #o: NonceGateOptions;
  readonly #lane: Lane;
  readonly #address: string;
  /** The nonce the caller asked for. */
  readonly nonce: bigint;
  #gaveUp = false;

  /** Made by {@linkcode NonceGate.claim}. */
  constructor(options: NonceGateOptions, lane: Lane, address: string, nonce: bigint) {
    this.#o = options;
    this.#lane = lane;
    this.#address = address;
    this.nonce = nonce;
  }

  /**
   * Inside the account's queue: `send` when the nonce is the account's next
   * one, `wait` while an earlier nonce is missing; throws when the chain has
   * already used the nonce, or when the missing one did not come within the
   * quiet time (the send would land at another nonce than asked).
   */
  async check(): Promise<"send" | "wait"> {
    const chain = await this.#o.pendingNonce(this.#address);
    const next = chain > this.#lane.after ? chain : this.#lane.after;
    if (this.nonce < next) {
      throw new StaleNonceError(
        `nonce too low: the transaction asks for nonce ${this.nonce} but ${this.#address} is at ${next}; custody assigns nonces and cannot replace a sent transaction.`,
      );
    }
    if (this.nonce === next) return "send";
    if (!this.#gaveUp) {
      this.#o.log?.(
        `nonce ${this.nonce} of ${this.#address} waits for nonce ${next} (sent in nonce order)`,
      );
      return "wait";
    }
    this.#o.log?.(`nonce ${this.nonce} of ${this.#address}: nonce ${next} did not come; refused`);
    throw new RpcError(
      RpcErrorCode.server,
      `nonce too high: the transaction asks for nonce ${this.nonce} but ${this.#address} is at ${next}, and no send of nonce ${next} came within ${
        Math.round((this.#o.quietMs ?? DEFAULT_NONCE_QUIET_MS) / 100) / 10
      } s; custody numbers an account's transactions in the order they are created, so it would land at ${next}, not ${this.nonce}. Send nonce ${next} first.`,
    );
  }

  /**
   * Outside the queue: resolves when a send of the account finishes, or
   * after the quiet time (then the next {@linkcode check} refuses a send still ahead).
   */
  park(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const done = () => {
        clearTimeout(timer);
        this.#lane.waiting.delete(wake);
        signal?.removeEventListener("abort", onAbort);
      };
      const wake = () => {
        done();
        resolve();
      };
      const onAbort = () => {
        done();
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        this.#gaveUp = true;
        wake();
      }, this.#o.quietMs ?? DEFAULT_NONCE_QUIET_MS);
      this.#lane.waiting.add(wake);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * The transaction was sent: the nonce stays taken, and the account is past
   * it (a later send asking for it is refused as stale).
   */
  sent(): void {
    if (this.nonce + 1n > this.#lane.after) this.#lane.after = this.nonce + 1n;
  }

  /** The transaction was not sent: the nonce may be asked for again. */
  release(): void {
    this.#lane.claimed.delete(this.nonce);
  }
}
