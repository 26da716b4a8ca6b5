/**
 * The identity of a send: what makes two `eth_sendTransaction` requests the
 * same transaction. A client that times out and sends its request again
 * sends the same chain, sender, nonce (when it gave one), destination,
 * value, data, gas and fee fields; the bridge joins such a repeat to the send
 * already under way instead of paying twice (see `send_book.ts`).
 *
 * The identity is taken from the platform request the send becomes
 * (`toTransactionRequest`), so every spelling of a field that means the same
 * (`data` or `input`, `gas` or `gasLimit`, hex case, leading zeros) gives the
 * same identity; the `note` and the vault account id are left out (the sender
 * address stands for the account).
 *
 * A send whose caller gave a nonce also gets an `externalTxId` derived from
 * its identity ({@linkcode derivedExternalTxId}), so that another bridge
 * process (a re-run, `forge script --resume`) finds the platform transaction
 * that already exists instead of creating a second one.
 *
 * @module
 */

import type { TransactionRequest } from "../platform/mod.ts";
import { toHex } from "../core/mod.ts";

/** What identifies one send. */
export interface SendIdentity {
  /** The canonical text of every field that makes the transaction (the join key). */
  readonly key: string;
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
  const key = JSON.stringify([
    chainId.toString(),
    from.toLowerCase(),
    nonce === undefined ? null : nonce.toString(),
    body.operation ?? null,
    dest?.oneTimeAddress?.address?.toLowerCase() ?? null,
    body.amount ?? null,
    data?.toLowerCase() ?? null,
    body.gasLimit ?? null,
    body.maxFee ?? null,
    body.priorityFee ?? null,
    body.fee ?? null,
    body.feeLevel ?? null,
  ]);
  return { key, nonce, from };
}

/** Hex digits of the identity's digest in a derived `externalTxId` (128 bits). */
const DIGEST_HEX = 32;

/**
 * The `externalTxId` of attempt `attempt` (from 1) of the send `identity`:
 * `<prefix><digest>` for the first, `<prefix><digest>-<attempt>` after a
 * platform transaction of the same identity ended in failure (REJECTED,
 * CANCELLED, ...): a send asked for again after a rejection is a new attempt,
 * while a send asked for again while the first is pending or after it
 * succeeded finds that one.
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
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(identity.key)),
  );
  const hex = toHex(digest).slice(0, DIGEST_HEX);
  return attempt <= 1 ? `${prefix}${hex}` : `${prefix}${hex}-${attempt}`;
}
