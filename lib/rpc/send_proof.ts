/**
 * Proof before adoption: a platform transaction found by a lookup (its
 * `externalTxId`, after a lost answer, by another bridge process) is taken
 * as the caller's send only when it is that send. The `externalTxId` is
 * derived from public facts (see `send_identity.ts`), so anyone who can
 * create transactions can create one carrying it; what was found is checked
 * against the request:
 *
 * - on the platform's record: source vault (or address), destination,
 *   amount, asset and call data ({@linkcode platformDifferences});
 * - once it has a hash, on the chain the bridge serves: the chain has that
 *   hash, and its sender, nonce, destination, value and input are the
 *   request's ({@linkcode chainDifferences}). A hash the chain lacks is
 *   never answered: on a restarted dev chain the transaction is "lost" and
 *   the send becomes a new attempt with its own `externalTxId`.
 *
 * @module
 */

import type { Transaction, TransactionRequest } from "../platform/mod.ts";
import { RpcError, RpcErrorCode } from "./protocol.ts";

/** A transaction as the node answers `eth_getTransactionByHash` (the fields compared). */
export interface ChainTransaction {
  /** The sender. */
  from?: string;
  /** The destination; null for a contract creation. */
  to?: string | null;
  /** The nonce, hex. */
  nonce?: string;
  /** The value in wei, hex. */
  value?: string;
  /** The call data, hex. */
  input?: string;
}

/** Wei of an ether decimal text (`"1.5"`, `"0.000000000000000034"`); undefined when it is not one. */
export function weiOf(text: unknown): bigint | undefined {
  const s = typeof text === "number" ? text.toString() : text;
  if (typeof s !== "string") return undefined;
  const m = /^(\d*)(?:\.(\d{0,18}))?$/.exec(s.trim());
  if (!m || (m[1] === "" && (m[2] ?? "") === "")) return undefined;
  return BigInt(m[1] || "0") * 10n ** 18n + BigInt((m[2] ?? "").padEnd(18, "0") || "0");
}

/** Call data as lower-case hex without `0x` (`""` for none). */
function hexData(data: unknown): string {
  return typeof data === "string" ? data.toLowerCase().replace(/^0x/, "") : "";
}

/** The destination address of a one-time-address request (`""` for a contract creation), else undefined. */
function requestAddress(body: TransactionRequest): string | undefined {
  const d = body.destination;
  if (!d || d.type !== "ONE_TIME_ADDRESS") return d ? undefined : "";
  const a = d.oneTimeAddress.address.toLowerCase();
  return a === "0x0" || a === "0x" ? "" : a;
}

/**
 * What differs between the platform transaction `t` and the request `body`
 * sent from `from` (empty: the record is the request's), in words.
 *
 * @example
 * ```ts
 * import type { Transaction, TransactionRequest } from "../platform/mod.ts";
 * declare const found: Transaction;
 * declare const body: TransactionRequest;
 * platformDifferences(found, body, "0xf39F…"); // e.g. ["amount 2 (asked 0.000000000000000034)"]
 * ```
 */
export function platformDifferences(
  t: Transaction,
  body: TransactionRequest,
  from: string,
): string[] {
  const out: string[] = [];
  const source = t.source as { type?: string; id?: string } | undefined;
  const sourceAddress = typeof t.sourceAddress === "string" ? t.sourceAddress.toLowerCase() : "";
  if (source?.id !== undefined && String(source.id) !== body.source.id) {
    out.push(`source vault account ${source.id} (asked ${body.source.id})`);
  } else if (sourceAddress && sourceAddress !== from.toLowerCase()) {
    out.push(`source address ${t.sourceAddress} (asked ${from})`);
  } else if (source?.id === undefined && !sourceAddress) out.push("no source shown");
  if (t.assetId !== undefined && t.assetId !== body.assetId) {
    out.push(`asset ${t.assetId} (asked ${body.assetId})`);
  }
  const asked = requestAddress(body);
  const dest = t.destination as { type?: string; id?: string } | undefined;
  if (asked === undefined) {
    const want = body.destination as { type: string; id: string };
    if (dest?.type !== want.type || String(dest?.id) !== want.id) {
      out.push(
        `destination ${dest?.type ?? "?"} ${dest?.id ?? "?"} (asked ${want.type} ${want.id})`,
      );
    }
  } else {
    const raw = typeof t.destinationAddress === "string" ? t.destinationAddress.toLowerCase() : "";
    const got = raw === "0x0" || raw === "0x" ? "" : raw;
    if (got !== asked) {
      out.push(
        `destination ${got || "none (a contract creation)"} (asked ${
          asked || "none (a contract creation)"
        })`,
      );
    }
  }
  const info = t.amountInfo as { amount?: string } | undefined;
  const amountText = info?.amount ?? t.amount;
  const got = weiOf(amountText);
  const want = weiOf(body.amount ?? "0") ?? 0n;
  if (got !== want) out.push(`amount ${amountText ?? "none"} (asked ${body.amount ?? "0"})`);
  const extra = t.extraParameters as { contractCallData?: string } | undefined;
  const askedData = hexData(
    (body.extraParameters as { contractCallData?: string } | undefined)?.contractCallData,
  );
  // A record that does not show its call data is proven by the chain once it has a hash.
  if (extra !== undefined && hexData(extra.contractCallData) !== askedData) {
    out.push(
      `call data of ${hexData(extra.contractCallData).length / 2} bytes (asked ${
        askedData.length / 2
      } bytes, or other bytes)`,
    );
  }
  return out;
}

/**
 * What differs between the chain's transaction `c` and the request (empty:
 * it is the request's); `["not on the chain"]` when the chain lacks it.
 */
export function chainDifferences(
  c: ChainTransaction | null | undefined,
  body: TransactionRequest,
  from: string,
  nonce: bigint | undefined,
): string[] {
  if (!c) return [NOT_ON_CHAIN];
  const out: string[] = [];
  if (c.from?.toLowerCase() !== from.toLowerCase()) out.push(`sender ${c.from} (asked ${from})`);
  if (nonce !== undefined && (c.nonce === undefined || BigInt(c.nonce) !== nonce)) {
    out.push(`nonce ${c.nonce === undefined ? "?" : BigInt(c.nonce)} (asked ${nonce})`);
  }
  const asked = requestAddress(body);
  if (asked !== undefined && (c.to ?? "").toLowerCase() !== asked) {
    out.push(`destination ${c.to ?? "none"} (asked ${asked || "none"})`);
  }
  const want = weiOf(body.amount ?? "0") ?? 0n;
  if (c.value === undefined || BigInt(c.value) !== want) {
    out.push(`value ${c.value} wei (asked ${want} wei)`);
  }
  const askedData = hexData(
    (body.extraParameters as { contractCallData?: string } | undefined)?.contractCallData,
  );
  if (hexData(c.input) !== askedData) out.push("input data");
  return out;
}

/** The difference {@linkcode chainDifferences} gives for a hash the chain lacks. */
export const NOT_ON_CHAIN = "not on the chain";

/**
 * The refusal of a found transaction that is not the caller's send: names
 * the transaction and what differs; `error.data` carries its id.
 */
export function notTheSend(t: Transaction, what: string, differences: string[]): RpcError {
  return new RpcError(
    RpcErrorCode.server,
    `Platform transaction ${t.id}${
      t.externalTxId ? ` (externalTxId ${t.externalTxId})` : ""
    } ${what}, but it is not this send: ${
      differences.join("; ")
    }. It was not adopted; nothing was sent. Check it on the platform; to send anyway, use another nonce (or another --externalTxId prefix if it was not made by a bridge).`,
    { txId: t.id, externalTxId: t.externalTxId ?? undefined, status: t.status, differences },
  );
}
