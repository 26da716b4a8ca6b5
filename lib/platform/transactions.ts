/**
 * Transactions (`platform-api.md`, "Transactions"): create, get by id, find
 * by `externalTxId`. Used by `rpc` to send and to sign messages.
 *
 * @module
 */

import { z } from "zod";
import type { PlatformClient } from "./client.ts";
import { PlatformApiError } from "./errors.ts";

/** Transaction statuses after which nothing changes. */
export const FINAL_FAILURE_STATUSES = [
  "CANCELLED",
  "REJECTED",
  "BLOCKED",
  "FAILED",
  "TIMEOUT",
] as const;

/** Statuses at which a transaction with a `txHash` counts as sent. */
export const SENT_STATUSES = ["BROADCASTING", "CONFIRMING", "COMPLETED"] as const;

/** A transaction as `GET /v1/transactions/{id}` returns it. */
export const Transaction = z.looseObject({
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
export type Transaction = z.infer<typeof Transaction>;

/** `POST /v1/transactions` answer. */
export const CreateTransactionResponse = z.looseObject({
  id: z.string(),
  status: z.string().optional(),
});
export type CreateTransactionResponse = z.infer<typeof CreateTransactionResponse>;

/** The body of a create (only the fields the bridge uses are typed). */
export interface TransactionRequest {
  operation: "TRANSFER" | "CONTRACT_CALL" | "TYPED_MESSAGE";
  assetId: string;
  source: { type: "VAULT_ACCOUNT"; id: string };
  destination?: { type: "ONE_TIME_ADDRESS"; oneTimeAddress: { address: string } };
  amount?: string;
  gasLimit?: string;
  maxFee?: string;
  priorityFee?: string;
  gasPrice?: string;
  fee?: string;
  feeLevel?: "LOW" | "MEDIUM" | "HIGH";
  note?: string;
  externalTxId?: string;
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
  const r = await client.request("POST", "/v1/transactions", {
    operation: `create a ${body.operation} transaction`,
    body,
    schema: CreateTransactionResponse,
    idempotencyKey: options.idempotencyKey,
    signal: options.signal,
    retries: options.retries,
  });
  return r.data;
}

/** Gets one transaction by its platform id. */
export async function getTransaction(
  client: PlatformClient,
  id: string,
  signal?: AbortSignal,
): Promise<Transaction> {
  const r = await client.request("GET", `/v1/transactions/${encodeURIComponent(id)}`, {
    operation: `get transaction ${JSON.stringify(id)}`,
    schema: Transaction,
    signal,
  });
  return r.data;
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
  try {
    const r = await client.request(
      "GET",
      `/v1/transactions/external_tx_id/${encodeURIComponent(externalTxId)}`,
      {
        operation: `find transaction with externalTxId ${JSON.stringify(externalTxId)}`,
        schema: Transaction,
        signal,
      },
    );
    return r.data;
  } catch (e) {
    if (e instanceof PlatformApiError && e.status === 404) return undefined;
    throw e;
  }
}
