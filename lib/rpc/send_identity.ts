/**
 * The identity of a send: what makes two `eth_sendTransaction` requests the
 * same transaction. A client that times out and sends its request again
 * sends the same chain, sender, nonce (when it gave one), destination,
 * value and data; the bridge joins such a repeat to the send already under
 * way instead of paying twice (see `send_book.ts`). Gas and fee fields are
 * not part of it: a retry re-priced for a moved base fee (`forge script
 * --resume`, a wallet's speed-up) is the same intent, and custody sends each
 * transaction once at the fee it was created with.
 *
 * The identity is taken from the platform request the send becomes
 * (`toTransactionRequest`), so every spelling of a field that means the same
 * (`data` or `input`, `gas` or `gasLimit`, hex case, leading zeros) gives the
 * same identity; the `note` and the vault account id are left out (the sender
 * address stands for the account).
 *
 * With a nonce, (chain, sender, nonce) is one **slot**: at most one
 * transaction can take it. Such a send gets an `externalTxId` derived from
 * its slot alone ({@linkcode derivedExternalTxId}), so that another bridge
 * process (a re-run, `forge script --resume`, a second bridge) finds the
 * platform transaction that holds the slot whatever it transfers, and then
 * joins it (the same transfer) or refuses (another one): see `send_slot.ts`.
 *
 * @module
 */

import type { TransactionRequest } from "../platform/mod.ts";
import { sha256Hex } from "../platform/jwt.ts";

/** What identifies one send. */
export interface SendIdentity {
  /** The canonical text of the slot and the transfer (the join key; no fee or gas field). */
  readonly key: string;
  /** The canonical text of (chain, sender, nonce); undefined without a nonce. */
  readonly slot: string | undefined;
  /** The nonce the caller asked for, if any. */
  readonly nonce: bigint | undefined;
  /** The sender, as given. */
  readonly from: string;
}

/**
 * The identity of a send of `body` (the platform request, before the
 * destination is resolved against the workspace) from `from` on `chainId`.
 *
 * @example
 * ```ts
 * import type { TransactionRequest } from "../platform/mod.ts";
 * declare const body: TransactionRequest;
 * const a = sendIdentity(11155111n, "0xAbC…", 3n, body);
 * const b = sendIdentity(11155111n, "0xabc…", 3n, body);
 * a.key === b.key; // true: the address case does not matter
 * ```
 */
export function sendIdentity(
  chainId: bigint,
  from: string,
  nonce: bigint | undefined,
  body: TransactionRequest,
): SendIdentity {
  const dest = body.destination as { oneTimeAddress?: { address?: string } } | undefined;
  const data = (body.extraParameters as { contractCallData?: string } | undefined)
    ?.contractCallData;
  const slot = [
    chainId.toString(),
    from.toLowerCase(),
    nonce === undefined ? null : nonce.toString(),
  ];
  const key = JSON.stringify([
    ...slot,
    body.operation ?? null,
    dest?.oneTimeAddress?.address?.toLowerCase() ?? null,
    body.amount ?? null,
    data?.toLowerCase() ?? null,
  ]);
  return { key, slot: nonce === undefined ? undefined : JSON.stringify(slot), nonce, from };
}

/** Hex digits of the identity's digest in a derived `externalTxId` (128 bits). */
const DIGEST_HEX = 32;

/**
 * The `externalTxId` of attempt `attempt` (from 1) at the slot of `identity`
 * (a send with a nonce): `<prefix><digest of the slot>` for the first,
 * `<prefix><digest>-<attempt>` after a platform transaction at the slot ended
 * in failure (REJECTED, CANCELLED, ...) or its hash is not on the chain (a
 * restarted dev chain): the slot asked for again is then a new attempt,
 * while a slot asked for again while its transaction is pending or after it
 * landed finds that one. Fee and gas fields are not in the digest, so a
 * re-priced retry finds the first attempt.
 *
 * @example
 * ```ts
 * declare const identity: SendIdentity;
 * await derivedExternalTxId("service-rpc-", identity, 1); // "service-rpc-3f2a…" (32 hex digits)
 * await derivedExternalTxId("service-rpc-", identity, 2); // "service-rpc-3f2a…-2"
 * ```
 */
export async function derivedExternalTxId(
  prefix: string,
  identity: SendIdentity,
  attempt: number,
): Promise<string> {
  if (identity.slot === undefined) throw new TypeError("a derived externalTxId needs a nonce");
  const hex = (await sha256Hex(identity.slot)).slice(0, DIGEST_HEX);
  return attempt <= 1 ? `${prefix}${hex}` : `${prefix}${hex}-${attempt}`;
}
