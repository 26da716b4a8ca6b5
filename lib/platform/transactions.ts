/**
 * Transactions (`platform-api.md`, "Transactions"): create, get by id, find
 * by `externalTxId`. Used by `rpc` to send and to sign messages.
 *
 * @module
 */

import * as z from "zod";
import type { PlatformClient } from "./client.ts";
import { PlatformApiError } from "./errors.ts";

/** A transaction as `GET /v1/transactions/{id}` returns it. */
export interface Transaction {
  /** The platform's transaction id. */
  id: string;
  /** SUBMITTED … COMPLETED, or a final failure (`TRANSACTION_STATUSES` of `lib/core`). */
  status: string;
  /** Why, for a failure. */
  subStatus?: string | null;
  /** The chain transaction hash, once there is one. */
  txHash?: string | null;
  /** The caller's unique id given at creation. */
  externalTxId?: string | null;
  /** For TYPED_MESSAGE: the signatures. */
  signedMessages?: {
    signature?: { r?: string; s?: string; v?: number; fullSig?: string };
    [extra: string]: unknown;
  }[] | null;
  /** Fields the platform adds. */
  [extra: string]: unknown;
}

const TransactionSchema: z.ZodType<Transaction> = z.looseObject({
  id: z.string(),
  status: z.string(),
  subStatus: z.string().nullish(),
  txHash: z.string().nullish(),
  externalTxId: z.string().nullish(),
  signedMessages: z.array(z.looseObject({
    signature: z.looseObject({
      r: z.string().optional(),
      s: z.string().optional(),
      v: z.number().optional(),
      fullSig: z.string().optional(),
    }).optional(),
  })).nullish(),
});

/** `POST /v1/transactions` answer. */
export interface CreateTransactionResponse {
  /** The new transaction's id. */
  id: string;
  /** Its first status. */
  status?: string;
  /** Fields the platform adds. */
  [extra: string]: unknown;
}

const CreateTransactionResponseSchema: z.ZodType<CreateTransactionResponse> = z.looseObject({
  id: z.string(),
  status: z.string().optional(),
});

/** The body of a create (only the fields the bridge uses are typed). */
export interface TransactionRequest {
  /** What to do. */
  operation: "TRANSFER" | "CONTRACT_CALL" | "TYPED_MESSAGE";
  /** The chain's asset id. */
  assetId: string;
  /** The signing vault account. */
  source: { type: "VAULT_ACCOUNT"; id: string };
  /** The recipient (`0x0` for a contract creation). */
  destination?:
    | { type: "ONE_TIME_ADDRESS"; oneTimeAddress: { address: string } }
    | { type: "VAULT_ACCOUNT" | "EXTERNAL_WALLET" | "INTERNAL_WALLET" | "CONTRACT"; id: string };
  /** Value in ether, decimal string. */
  amount?: string;
  /** Gas limit, decimal string. */
  gasLimit?: string;
  /** EIP-1559 max fee per gas, gwei. */
  maxFee?: string;
  /** EIP-1559 priority fee per gas, gwei. */
  priorityFee?: string;
  /** Legacy gas price, gwei (unused by the bridge: it sends `fee`). */
  gasPrice?: string;
  /** Legacy gas price, gwei. */
  fee?: string;
  /** Fee level when no fee is given. */
  feeLevel?: "LOW" | "MEDIUM" | "HIGH";
  /** Free text. */
  note?: string;
  /** The caller's unique id of this transaction. */
  externalTxId?: string;
  /** `contractCallData` or `rawMessageData`. */
  extraParameters?: Record<string, unknown>;
}

/**
 * Creates a transaction. `idempotencyKey` is sent on every retry of this
 * call (and should be reused by any later call for the same transaction).
 */
export async function createTransaction(
  client: PlatformClient,
  body: TransactionRequest,
  options: { idempotencyKey?: string; signal?: AbortSignal; retries?: number } = {},
): Promise<CreateTransactionResponse> {
  return (await client.request("POST", "/v1/transactions", {
    operation: `create a ${body.operation} transaction`,
    body,
    schema: CreateTransactionResponseSchema,
    idempotencyKey: options.idempotencyKey,
    signal: options.signal,
    retries: options.retries,
  })).data;
}

/** Gets one transaction by its platform id. */
export async function getTransaction(
  client: PlatformClient,
  id: string,
  signal?: AbortSignal,
): Promise<Transaction> {
  return (await client.request("GET", `/v1/transactions/${encodeURIComponent(id)}`, {
    operation: `get transaction ${JSON.stringify(id)}`,
    schema: TransactionSchema,
    signal,
  })).data;
}

/**
 * Finds a transaction by its `externalTxId`; `undefined` when the platform
 * has none (404).
 */
export async function findTransactionByExternalId(
  client: PlatformClient,
  externalTxId: string,
  signal?: AbortSignal,
): Promise<Transaction | undefined> {
  const path = `/v1/transactions/external_tx_id/${encodeURIComponent(externalTxId)}`;
  try {
    return (await client.request("GET", path, {
      operation: `find transaction with externalTxId ${JSON.stringify(externalTxId)}`,
      schema: TransactionSchema,
      signal,
    })).data;
  } catch (e) {
    if (e instanceof PlatformApiError && e.status === 404) return undefined;
    throw e;
  }
}

/**
 * Lists transactions (`GET /v1/transactions`) matching `query` (the
 * platform's filters: `status` comma-separated, `sourceType`/`sourceId`,
 * `assets`, `orderBy`, `sort`, `limit`): the first page only.
 */
export async function listTransactions(
  client: PlatformClient,
  query: Record<string, string | number>,
  signal?: AbortSignal,
): Promise<Transaction[]> {
  return (await client.request("GET", "/v1/transactions", {
    operation: "list transactions",
    query,
    schema: z.array(TransactionSchema),
    signal,
  })).data;
}

/** Cancels a transaction not yet signed (`POST /v1/transactions/{id}/cancel`). */
export async function cancelTransaction(
  client: PlatformClient,
  id: string,
  signal?: AbortSignal,
): Promise<void> {
  await client.request("POST", `/v1/transactions/${encodeURIComponent(id)}/cancel`, {
    operation: `cancel transaction ${JSON.stringify(id)}`,
    signal,
  });
}
