/**
 * The check of a `POST /v1/transactions` body: what it asks for becomes a
 * {@linkcode CheckedRequest} (what the engine signs and sends) and the first
 * {@linkcode TransactionRecord} (what the API returns, `SUBMITTED`). Anything
 * wrong is a `BadRequestError` (answered 400) saying what and how to fix it. No state
 * is read or written here besides the vault keys and the config.
 *
 * @module
 */

import { accountName } from "../vault/identity.ts";
import { hashTypedData, type Hex, isAddress, isHex, parseEther, parseGwei } from "viem";
import { bad } from "../http/params.ts";
import type { TransactionDeps } from "./deps.ts";
import { WALLET_TYPES, type WalletType } from "../vault/whitelist.ts";
import type { FeeLevel } from "../chain.ts";
import type { TransactionRecord } from "./store.ts";
import {
  type CheckedMessage,
  messageBytes,
  parseTypedData,
  typedDataArgs,
} from "./message_signing.ts";

/** The checked request of a transfer or contract call. */
export interface ChainRequest {
  /** Sent to the node. */
  kind: "chain";
  /** The source vault account. */
  accountId: number;
  /** Recipient; `undefined` for a contract creation. */
  to: Hex | undefined;
  /** Wei sent. */
  value: bigint;
  /** Call data or init code. */
  data: Hex | undefined;
  /** Gas limit; estimated when absent. */
  gasLimit?: bigint;
  /** The fees asked for: EIP-1559 values, a legacy gas price, or a level. */
  fees: { kind: "eip1559"; maxFee: bigint; priorityFee: bigint } | {
    kind: "legacy";
    gasPrice: bigint;
  } | {
    kind: "level";
    level: FeeLevel;
  };
}

/** The checked request of a message signing. */
export interface MessageRequest {
  /** Signed only, never sent. */
  kind: "message";
  /** The signing vault account. */
  accountId: number;
  /** The messages to sign. */
  messages: CheckedMessage[];
}

/** A checked transaction request. */
export type CheckedRequest = ChainRequest | MessageRequest;

/** The outcome of {@linkcode checkTransactionRequest}. */
export interface CheckedTransaction {
  /** What to sign (and send). */
  request: CheckedRequest;
  /** The record of the new transaction, status `SUBMITTED`. */
  record: TransactionRecord;
  /** The client's `externalTxId`, when given. */
  externalTxId?: string;
}

/** What the check reads of the emulator: the chain's asset, the vault keys, clock and ids. */
export type CheckContext = Pick<TransactionDeps, "config" | "keys" | "now" | "uuid"> & {
  /** Whitelisted wallets, for `EXTERNAL_WALLET`/`INTERNAL_WALLET`/`CONTRACT` destinations. */
  whitelist?: TransactionDeps["whitelist"];
};

const DECIMAL = /^(0|[1-9]\d*)(\.\d+)?$/;

function decimalText(v: unknown, name: string): string | undefined {
  if (v === undefined || v === null || v === "") return undefined;
  const s = typeof v === "number" && Number.isFinite(v) ? String(v) : v;
  if (typeof s !== "string" || !DECIMAL.test(s.trim())) {
    bad(`${name} must be a non-negative decimal number as a string, e.g. "1.5".`);
  }
  return s.trim();
}

function gwei(v: unknown, name: string): bigint | undefined {
  const s = decimalText(v, name);
  if (s === undefined) return undefined;
  try {
    return parseGwei(s);
  } catch {
    bad(`${name} is not a valid gwei amount.`);
  }
}

/**
 * Checks a `POST /v1/transactions` body (TRANSFER, CONTRACT_CALL including
 * contract creation, TYPED_MESSAGE). Throws a `BadRequestError`.
 *
 * @example
 * ```ts
 * import type { EmulatorContext } from "../context.ts";
 * declare const ctx: EmulatorContext;
 * const { request, record } = checkTransactionRequest(ctx, {
 *   assetId: ctx.config.assetId,
 *   source: { type: "VAULT_ACCOUNT", id: "0" },
 *   destination: { type: "VAULT_ACCOUNT", id: "1" },
 *   amount: "0.1",
 * });
 * record.status; // "SUBMITTED"
 * ```
 */
export function checkTransactionRequest(ctx: CheckContext, body: unknown): CheckedTransaction {
  if (!body || typeof body !== "object" || Array.isArray(body)) {
    bad("The body must be a transaction request object.");
  }
  const b = body as Record<string, unknown>;
  const operation = b.operation === undefined ? "TRANSFER" : String(b.operation);
  if (!["TRANSFER", "CONTRACT_CALL", "TYPED_MESSAGE"].includes(operation)) {
    bad(
      `operation "${operation}" is not supported: use TRANSFER, CONTRACT_CALL or TYPED_MESSAGE.`,
    );
  }
  if (b.assetId !== ctx.config.assetId) {
    bad(
      `assetId must be "${ctx.config.assetId}" (the base asset of chain ${ctx.config.chainId}); got ${
        JSON.stringify(b.assetId ?? null)
      }.`,
    );
  }
  const source = b.source as Record<string, unknown> | undefined;
  if (!source || source.type !== "VAULT_ACCOUNT" || typeof source.id !== "string") {
    bad('source must be {"type": "VAULT_ACCOUNT", "id": "<vault account id>"}.');
  }
  if (!ctx.keys.has(source.id)) bad(`source vault account "${source.id}" does not exist.`);
  const accountId = Number(source.id);
  let externalTxId: string | undefined;
  if (b.externalTxId !== undefined && b.externalTxId !== null) {
    if (
      typeof b.externalTxId !== "string" || b.externalTxId === "" || b.externalTxId.length > 255
    ) {
      bad("externalTxId must be a non-empty string of at most 255 characters.");
    }
    externalTxId = b.externalTxId;
  }
  if (b.note !== undefined && typeof b.note !== "string") bad("note must be a string.");
  if (
    b.customerRefId !== undefined && b.customerRefId !== null &&
    (typeof b.customerRefId !== "string" || b.customerRefId.length > 256)
  ) {
    bad("customerRefId must be a string of at most 256 characters.");
  }
  const extra = (b.extraParameters ?? {}) as Record<string, unknown>;
  if (typeof extra !== "object" || Array.isArray(extra)) {
    bad("extraParameters must be an object.");
  }
  const now = ctx.now();
  const base: TransactionRecord = {
    id: ctx.uuid(),
    ...(externalTxId ? { externalTxId } : {}),
    ...(typeof b.customerRefId === "string" ? { customerRefId: b.customerRefId } : {}),
    status: "SUBMITTED",
    subStatus: "",
    txHash: "",
    operation,
    note: (b.note as string | undefined) ?? "",
    assetId: ctx.config.assetId,
    assetType: "BASE_ASSET",
    source: { type: "VAULT_ACCOUNT", id: source.id, name: accountName(accountId), subType: "" },
    sourceAddress: ctx.keys.address(accountId),
    createdAt: now,
    lastUpdated: now,
    createdBy: "emulator-api-user",
    signedBy: [],
    rejectedBy: "",
    numOfConfirmations: 0,
    blockInfo: {},
    signedMessages: [],
    networkRecords: [],
    extraParameters: extra,
    feeCurrency: ctx.config.assetId,
  };
  if (operation === "TYPED_MESSAGE") {
    return {
      request: { kind: "message", accountId, messages: checkMessages(extra) },
      // a message has no counterparty: the platform's peer type for that is UNKNOWN (the
      // SDK's DestinationTransferPeerPathResponse requires a type)
      record: {
        ...base,
        destination: { type: "UNKNOWN", name: "N/A" },
        destinationAddress: "",
        amount: 0,
        amountInfo: {},
      },
      externalTxId,
    };
  }
  return { ...checkChainCall(ctx, b, extra, operation, accountId, base), externalTxId };
}

/** The messages of a TYPED_MESSAGE (`extraParameters.rawMessageData.messages`). */
function checkMessages(extra: Record<string, unknown>): CheckedMessage[] {
  const raw = extra.rawMessageData as Record<string, unknown> | undefined;
  const msgs = raw?.messages;
  if (!Array.isArray(msgs) || msgs.length === 0) {
    bad(
      "A TYPED_MESSAGE needs extraParameters.rawMessageData.messages with at least one message.",
    );
  }
  return msgs.map((m, i) => {
    const mm = (m ?? {}) as Record<string, unknown>;
    const type = mm.type === undefined ? "ETH_MESSAGE" : String(mm.type);
    if (type !== "ETH_MESSAGE" && type !== "EIP712") {
      bad(`message ${i}: type "${type}" is not supported: use ETH_MESSAGE or EIP712.`);
    }
    if (type === "EIP712") {
      const td = parseTypedData(mm.content);
      try {
        hashTypedData(typedDataArgs(td));
      } catch (e) {
        bad(
          `message ${i}: the EIP712 typed data is invalid: ${(e as Error).message.split("\n")[0]}`,
        );
      }
      return { type, content: td, index: Number(mm.index ?? i) };
    }
    messageBytes(mm.content);
    return { type, content: mm.content, index: Number(mm.index ?? i) };
  });
}

/** A TRANSFER or CONTRACT_CALL: destination, call data, amount, gas limit and fees. */
function checkChainCall(
  ctx: CheckContext,
  b: Record<string, unknown>,
  extra: Record<string, unknown>,
  operation: string,
  accountId: number,
  base: TransactionRecord,
): { request: ChainRequest; record: TransactionRecord } {
  const dest = b.destination as Record<string, unknown> | undefined;
  let to: Hex | undefined;
  let destination: Record<string, unknown> = {};
  if (dest !== undefined && dest !== null) {
    if (typeof dest !== "object") bad("destination must be an object.");
    if (dest.type === "ONE_TIME_ADDRESS") {
      const addr = (dest.oneTimeAddress as Record<string, unknown> | undefined)?.address;
      if (typeof addr !== "string") bad("destination.oneTimeAddress.address is required.");
      if (addr === "0x0" || addr === "0x" || addr === "") to = undefined;
      else if (!isAddress(addr, { strict: false })) {
        bad(`destination address "${addr}" is not an EVM address.`);
      } else to = addr as Hex;
      // the address is the record's destinationAddress: the SDK's response model has no oneTimeAddress
      destination = { type: "ONE_TIME_ADDRESS" };
    } else if (dest.type === "VAULT_ACCOUNT") {
      const id = String(dest.id ?? "");
      if (!ctx.keys.has(id)) bad(`destination vault account "${id}" does not exist.`);
      to = ctx.keys.address(Number(id));
      destination = { type: "VAULT_ACCOUNT", id, name: accountName(Number(id)) };
    } else if ((WALLET_TYPES as readonly unknown[]).includes(dest.type)) {
      const type = dest.type as WalletType;
      const id = String(dest.id ?? "");
      const wallet = ctx.whitelist?.find(type, id);
      if (!wallet) bad(`destination ${type} "${id}" is not whitelisted.`);
      to = wallet.address as Hex;
      destination = { type, id, name: wallet.name };
    } else {
      bad(
        'destination.type must be "ONE_TIME_ADDRESS", "VAULT_ACCOUNT", "EXTERNAL_WALLET", "INTERNAL_WALLET" or "CONTRACT".',
      );
    }
  }
  const data = extra.contractCallData;
  if (data !== undefined && data !== null && data !== "") {
    if (typeof data !== "string" || !isHex(data.startsWith("0x") ? data : `0x${data}`)) {
      bad("extraParameters.contractCallData must be hex.");
    }
  }
  const dataHex = typeof data === "string" && data !== "" && data !== "0x"
    ? (data.startsWith("0x") ? data : `0x${data}`) as Hex
    : undefined;
  if (to === undefined && !dataHex) {
    bad(
      operation === "TRANSFER"
        ? "A TRANSFER needs a destination."
        : "A contract creation (no destination or 0x0) needs the init code in extraParameters.contractCallData.",
    );
  }
  const amountText = decimalText(b.amount, "amount") ?? "0";
  let value: bigint;
  try {
    value = parseEther(amountText);
  } catch {
    bad("amount is not a valid ether amount.");
  }
  let gasLimit: bigint | undefined;
  if (b.gasLimit !== undefined && b.gasLimit !== null && b.gasLimit !== "") {
    const g = String(b.gasLimit);
    if (!/^\d+$/.test(g) || BigInt(g) === 0n) bad("gasLimit must be a positive integer.");
    gasLimit = BigInt(g);
  }
  const fees = checkFees(b);
  return {
    request: { kind: "chain", accountId, to, value, data: dataHex, gasLimit, fees },
    record: {
      ...base,
      // the fee asked for (feeLevel, maxFee, priorityFee) stays in the checked request: the SDK's
      // response model declares none of them
      destination,
      destinationAddress: to ?? "",
      destinationTag: "",
      amount: Number(amountText),
      requestedAmount: Number(amountText),
      netAmount: Number(amountText),
      amountInfo: { amount: amountText, requestedAmount: amountText, netAmount: amountText },
      ...(gasLimit !== undefined ? { gasLimit: gasLimit.toString() } : {}),
      feeInfo: {},
      networkFee: 0,
      fee: 0,
    },
  };
}

/** The fees: `maxFee` + `priorityFee` (gwei), else `fee`/`gasPrice`, else `feeLevel`. */
function checkFees(b: Record<string, unknown>): ChainRequest["fees"] {
  const maxFee = gwei(b.maxFee, "maxFee");
  const priorityFee = gwei(b.priorityFee, "priorityFee");
  const gasPrice = gwei(b.fee, "fee") ?? gwei(b.gasPrice, "gasPrice");
  if (maxFee !== undefined || priorityFee !== undefined) {
    if (maxFee === undefined || priorityFee === undefined) {
      bad("maxFee and priorityFee go together (gwei strings).");
    }
    if (priorityFee > maxFee) bad("priorityFee cannot exceed maxFee.");
    return { kind: "eip1559", maxFee, priorityFee };
  }
  if (gasPrice !== undefined) return { kind: "legacy", gasPrice };
  const level = b.feeLevel === undefined ? "MEDIUM" : String(b.feeLevel).toUpperCase();
  if (level !== "LOW" && level !== "MEDIUM" && level !== "HIGH") {
    bad("feeLevel must be LOW, MEDIUM or HIGH.");
  }
  return { kind: "level", level };
}
