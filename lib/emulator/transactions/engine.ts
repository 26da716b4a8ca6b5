/**
 * The transaction lifecycle. A created transaction is stored as SUBMITTED
 * and then walks, in the background:
 *
 * SUBMITTED → (PENDING_AUTHORIZATION while held) → PENDING_SIGNATURE →
 * BROADCASTING (signed; `txHash` set; raw transaction stored) → CONFIRMING →
 * COMPLETED (receipt mined with status 1), or FAILED with a `subStatus`
 * (INSUFFICIENT_FUNDS, SMART_CONTRACT_EXECUTION_FAILED, INVALID_NONCE,
 * GAS_LIMIT_TOO_LOW, INSUFFICIENT_FEE, ERROR_BROADCASTING, NETWORK_ERROR).
 * Messages go SUBMITTED → PENDING_SIGNATURE → COMPLETED with
 * `signedMessages`. Every change is written to SQLite and emitted as
 * `transaction.status.updated` (creation as `transaction.created`).
 *
 * Nonces: each account has a lock; inside it the nonce is the next one after
 * the last sent (first read from the node's pending count), so concurrent
 * creates never reuse a nonce. A transaction is stored with its raw bytes
 * before it is sent, so after a restart BROADCASTING ones are sent again and
 * CONFIRMING ones are watched again.
 *
 * @module
 */

import {
  formatEther,
  formatGwei,
  hashMessage,
  hashTypedData,
  type Hex,
  isAddress,
  isHex,
  keccak256,
  parseEther,
  parseGwei,
  parseSignature,
  type TransactionReceipt,
} from "viem";
import { ApiError, ErrorCode } from "../http/reply.ts";
import type { EmulatorContext } from "../context.ts";
import type { Row } from "../store.ts";
import { accountName } from "../vault/accounts.ts";
import type { FeeLevel, Fees } from "../chain.ts";

/** Schema of the transactions table. */
export const TRANSACTIONS_SCHEMA = `
CREATE TABLE IF NOT EXISTS transactions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  external_tx_id TEXT UNIQUE,
  status TEXT NOT NULL,
  sub_status TEXT NOT NULL DEFAULT '',
  operation TEXT NOT NULL,
  account_id INTEGER NOT NULL,
  tx_hash TEXT,
  raw_tx TEXT,
  nonce INTEGER,
  request TEXT NOT NULL,
  record TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS transactions_status ON transactions (status);
`;

/** Statuses after which nothing changes. */
export const FINAL_STATUSES = new Set([
  "COMPLETED",
  "FAILED",
  "CANCELLED",
  "REJECTED",
  "BLOCKED",
  "TIMEOUT",
]);

/** A transaction as the API returns it. */
export type TransactionRecord = Record<string, unknown> & {
  id: string;
  status: string;
  subStatus: string;
  txHash: string;
};

/** The checked request of a transfer or contract call. */
interface ChainRequest {
  kind: "chain";
  accountId: number;
  to: Hex | undefined;
  value: bigint;
  data: Hex | undefined;
  gasLimit?: bigint;
  fees: { kind: "eip1559"; maxFee: bigint; priorityFee: bigint } | {
    kind: "legacy";
    gasPrice: bigint;
  } | {
    kind: "level";
    level: FeeLevel;
  };
}

/** The checked request of a message signing. */
interface MessageRequest {
  kind: "message";
  accountId: number;
  messages: { type: "ETH_MESSAGE" | "EIP712"; content: unknown; index: number }[];
}

type Checked = ChainRequest | MessageRequest;

function bad(message: string): never {
  throw new ApiError(400, message, ErrorCode.badRequest);
}

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

function parseTypedData(content: unknown): Record<string, unknown> {
  let obj = content;
  if (typeof content === "string") {
    try {
      obj = JSON.parse(content);
    } catch {
      bad("An EIP712 message's content must be the typed-data object (or its JSON).");
    }
  }
  if (!obj || typeof obj !== "object") bad("An EIP712 message's content must be an object.");
  const o = obj as Record<string, unknown>;
  if (!o.types || typeof o.types !== "object" || typeof o.primaryType !== "string") {
    bad("An EIP712 message needs types, primaryType, domain and message.");
  }
  return o;
}

// deno-lint-ignore no-explicit-any
type AnyTypedData = any;

function typedDataArgs(o: Record<string, unknown>): AnyTypedData {
  return {
    domain: o.domain ?? {},
    types: { ...(o.types as Record<string, unknown>) },
    primaryType: o.primaryType,
    message: o.message ?? {},
  };
}

function messageBytes(content: unknown): { raw: Uint8Array } | string {
  if (typeof content !== "string") bad("An ETH_MESSAGE content must be a string (hex).");
  const hex = content.startsWith("0x") ? content : `0x${content}`;
  if (isHex(hex) && hex.length % 2 === 0) {
    const bytes = new Uint8Array((hex.length - 2) / 2);
    for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 + 2 * i, 4 + 2 * i), 16);
    return { raw: bytes };
  }
  return content;
}

/** Maps a node error to the platform's subStatus. */
export function classifyNodeError(e: unknown): { subStatus: string; description: string } {
  const text = [
    (e as { shortMessage?: string })?.shortMessage,
    (e as { details?: string })?.details,
    (e as Error)?.message,
  ].filter(Boolean).join(" | ");
  const t = text.toLowerCase();
  const description = text.split("\n")[0].slice(0, 300);
  if (t.includes("insufficient funds") || t.includes("exceeds the balance")) {
    return { subStatus: "INSUFFICIENT_FUNDS", description };
  }
  if (t.includes("nonce")) return { subStatus: "INVALID_NONCE", description };
  if (t.includes("intrinsic gas") || t.includes("gas too low") || t.includes("out of gas")) {
    return { subStatus: "GAS_LIMIT_TOO_LOW", description };
  }
  if (t.includes("underpriced") || t.includes("base fee") || t.includes("fee cap")) {
    return { subStatus: "INSUFFICIENT_FEE", description };
  }
  if (t.includes("revert")) return { subStatus: "SMART_CONTRACT_EXECUTION_FAILED", description };
  if (t.includes("fetch") || t.includes("http request failed") || t.includes("connect")) {
    return { subStatus: "NETWORK_ERROR", description };
  }
  return { subStatus: "ERROR_BROADCASTING", description };
}

function compressedPublicKey(uncompressed: Hex): string {
  const x = uncompressed.slice(4, 68);
  const yLast = parseInt(uncompressed.slice(-2), 16);
  return `${yLast % 2 === 0 ? "02" : "03"}${x}`;
}

/**
 * The lifecycle engine of one emulator.
 *
 * @example
 * ```ts
 * const engine = new TransactionEngine(ctx);
 * const t = engine.create({ operation: "TRANSFER", assetId, source: { type: "VAULT_ACCOUNT", id: "0" }, destination, amount: "0.1" });
 * ```
 */
export class TransactionEngine {
  readonly #ctx: EmulatorContext;
  readonly #locks = new Map<number, Promise<unknown>>();
  readonly #nonces = new Map<number, number>();
  readonly #running = new Set<string>();
  /** CONFIRMING transactions: id → block number last checked (−1 = never). */
  readonly #confirming = new Map<string, bigint>();
  #confirmLoop: Promise<void> | undefined;
  #stopped = false;
  readonly #tasks = new Set<Promise<void>>();
  /** How often CONFIRMING transactions are checked, ms. */
  readonly pollMs: number;

  readonly #stmts;

  /** `pollMs`: how often CONFIRMING transactions are checked (default 25). */
  constructor(ctx: EmulatorContext, options: { pollMs?: number } = {}) {
    this.#ctx = ctx;
    this.pollMs = options.pollMs ?? 25;
    const db = ctx.store.db;
    this.#stmts = {
      insert: db.prepare(
        `INSERT INTO transactions (id, external_tx_id, status, sub_status, operation, account_id, request, record, created_at, updated_at)
         VALUES (?, ?, ?, '', ?, ?, ?, ?, ?, ?)`,
      ),
      byId: db.prepare("SELECT * FROM transactions WHERE id = ?"),
      byExternal: db.prepare("SELECT * FROM transactions WHERE external_tx_id = ?"),
      update: db.prepare(
        `UPDATE transactions SET status = ?, sub_status = ?, tx_hash = ?, raw_tx = ?, nonce = ?, record = ?, updated_at = ?
         WHERE id = ?`,
      ),
      unfinished: db.prepare(
        `SELECT id FROM transactions WHERE status NOT IN ('COMPLETED','FAILED','CANCELLED','REJECTED','BLOCKED','TIMEOUT')
         ORDER BY seq`,
      ),
    };
  }

  // ---- reading -------------------------------------------------------------

  #row(id: string): Row | undefined {
    return this.#stmts.byId.get(id) as Row | undefined;
  }

  /** The transaction `id` as the API returns it, or `undefined`. */
  get(id: string): TransactionRecord | undefined {
    const r = this.#row(id);
    return r ? JSON.parse(String(r.record)) : undefined;
  }

  /** The transaction `id` as stored JSON text (no parse), or `undefined`. */
  getJson(id: string): string | undefined {
    const r = this.#row(id);
    return r ? String(r.record) : undefined;
  }

  /** The (first) transaction with this `externalTxId`. */
  getByExternalId(externalTxId: string): TransactionRecord | undefined {
    const r = this.#stmts.byExternal.get(externalTxId) as Row | undefined;
    return r ? JSON.parse(String(r.record)) : undefined;
  }

  /** The latest transactions. */
  list(o: { limit: number; statuses: string[]; sort: "ASC" | "DESC" }): TransactionRecord[] {
    const where = o.statuses.length
      ? `WHERE status IN (${o.statuses.map(() => "?").join(",")})`
      : "";
    const rows = this.#ctx.store.db.prepare(
      `SELECT record FROM transactions ${where} ORDER BY seq ${o.sort} LIMIT ?`,
    ).all(...o.statuses, o.limit) as Row[];
    return rows.map((r) => JSON.parse(String(r.record)));
  }

  // ---- creation ------------------------------------------------------------

  #check(body: unknown): { checked: Checked; record: TransactionRecord; externalTxId?: string } {
    const ctx = this.#ctx;
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
    const extra = (b.extraParameters ?? {}) as Record<string, unknown>;
    if (typeof extra !== "object" || Array.isArray(extra)) {
      bad("extraParameters must be an object.");
    }
    const now = ctx.now();
    const base: TransactionRecord = {
      id: ctx.uuid(),
      ...(externalTxId ? { externalTxId } : {}),
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
      const raw = extra.rawMessageData as Record<string, unknown> | undefined;
      const msgs = raw?.messages;
      if (!Array.isArray(msgs) || msgs.length === 0) {
        bad(
          "A TYPED_MESSAGE needs extraParameters.rawMessageData.messages with at least one message.",
        );
      }
      const messages = msgs.map((m, i) => {
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
              `message ${i}: the EIP712 typed data is invalid: ${
                (e as Error).message.split("\n")[0]
              }`,
            );
          }
          return { type, content: td, index: Number(mm.index ?? i) } as const;
        }
        messageBytes(mm.content);
        return { type, content: mm.content, index: Number(mm.index ?? i) } as const;
      });
      return {
        checked: { kind: "message", accountId, messages },
        record: { ...base, destination: {}, destinationAddress: "", amount: 0, amountInfo: {} },
        externalTxId,
      };
    }
    // TRANSFER or CONTRACT_CALL
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
        destination = { type: "ONE_TIME_ADDRESS", oneTimeAddress: { address: addr } };
      } else if (dest.type === "VAULT_ACCOUNT") {
        const id = String(dest.id ?? "");
        if (!ctx.keys.has(id)) bad(`destination vault account "${id}" does not exist.`);
        to = ctx.keys.address(Number(id));
        destination = { type: "VAULT_ACCOUNT", id, name: accountName(Number(id)) };
      } else {
        bad('destination.type must be "ONE_TIME_ADDRESS" or "VAULT_ACCOUNT".');
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
    const maxFee = gwei(b.maxFee, "maxFee");
    const priorityFee = gwei(b.priorityFee, "priorityFee");
    const gasPrice = gwei(b.fee, "fee") ?? gwei(b.gasPrice, "gasPrice");
    let fees: ChainRequest["fees"];
    if (maxFee !== undefined || priorityFee !== undefined) {
      if (maxFee === undefined || priorityFee === undefined) {
        bad("maxFee and priorityFee go together (gwei strings).");
      }
      if (priorityFee > maxFee) bad("priorityFee cannot exceed maxFee.");
      fees = { kind: "eip1559", maxFee, priorityFee };
    } else if (gasPrice !== undefined) {
      fees = { kind: "legacy", gasPrice };
    } else {
      const level = b.feeLevel === undefined ? "MEDIUM" : String(b.feeLevel).toUpperCase();
      if (level !== "LOW" && level !== "MEDIUM" && level !== "HIGH") {
        bad("feeLevel must be LOW, MEDIUM or HIGH.");
      }
      fees = { kind: "level", level };
    }
    return {
      checked: { kind: "chain", accountId, to, value, data: dataHex, gasLimit, fees },
      record: {
        ...base,
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
      externalTxId,
    };
  }

  /**
   * Checks and stores a new transaction (SUBMITTED), emits
   * `transaction.created`, and starts its walk. Throws a 400
   * {@linkcode ApiError} for a bad request or a reused `externalTxId`.
   */
  create(body: unknown): TransactionRecord {
    const { checked, record, externalTxId } = this.#check(body);
    if (externalTxId && this.#stmts.byExternal.get(externalTxId)) {
      throw new ApiError(
        400,
        `externalTxId "${externalTxId}" was already used by another transaction; it must be unique.`,
        ErrorCode.conflict,
      );
    }
    const now = this.#ctx.now();
    this.#stmts.insert.run(
      record.id,
      externalTxId ?? null,
      record.status,
      record.operation as string,
      checked.accountId,
      JSON.stringify(checked, (_k, v) => typeof v === "bigint" ? `${v}n` : v),
      JSON.stringify(record),
      now,
      now,
    );
    this.#ctx.events.emit({
      eventType: "transaction.created",
      resourceId: record.id,
      data: record,
    });
    this.#schedule(record.id);
    return record;
  }

  #request(row: Row): Checked {
    return JSON.parse(
      String(row.request),
      (_k, v) => typeof v === "string" && /^\d+n$/.test(v) ? BigInt(v.slice(0, -1)) : v,
    );
  }

  // ---- updates -------------------------------------------------------------

  #update(
    id: string,
    patch: Partial<TransactionRecord>,
    extra: { raw?: string | null; nonce?: number | null } = {},
  ): TransactionRecord {
    const row = this.#row(id);
    if (!row) throw new Error(`transaction ${id} vanished`);
    const before = JSON.parse(String(row.record)) as TransactionRecord;
    if (FINAL_STATUSES.has(before.status)) {
      // ended (e.g. forced through admin while the walk was busy): never changes again
      return before;
    }
    const now = this.#ctx.now();
    const record = { ...before, ...patch, lastUpdated: now } as TransactionRecord;
    this.#stmts.update.run(
      record.status,
      record.subStatus ?? "",
      record.txHash || null,
      extra.raw !== undefined ? extra.raw : (row.raw_tx as string | null),
      extra.nonce !== undefined ? extra.nonce : (row.nonce as number | null),
      JSON.stringify(record),
      now,
      id,
    );
    if (record.status !== before.status || record.subStatus !== before.subStatus) {
      this.#ctx.events.emit({
        eventType: "transaction.status.updated",
        resourceId: id,
        data: record,
      });
    }
    return record;
  }

  #fail(id: string, subStatus: string, description: string): void {
    this.#update(id, { status: "FAILED", subStatus, errorDescription: description });
    this.#ctx.log(`transaction ${id} FAILED (${subStatus}): ${description}`);
  }

  // ---- the walk ------------------------------------------------------------

  #schedule(id: string): void {
    if (this.#stopped) return;
    const task: Promise<void> = new Promise<void>((r) => setTimeout(r, 0))
      .then(() => this.#advance(id))
      .catch((e) => {
        this.#ctx.log(`transaction ${id}: internal error: ${(e as Error)?.stack ?? e}`);
        try {
          const t = this.get(id);
          if (t && !FINAL_STATUSES.has(t.status)) {
            this.#fail(id, "INTERNAL_ERROR", String((e as Error)?.message ?? e));
          }
        } catch { /* store closed */ }
      })
      .finally(() => this.#tasks.delete(task));
    this.#tasks.add(task);
  }

  async #advance(id: string): Promise<void> {
    if (this.#running.has(id) || this.#stopped) return;
    this.#running.add(id);
    try {
      let row = this.#row(id);
      if (!row) return;
      let status = String(row.status);
      if (status === "SUBMITTED") {
        const final = this.#ctx.faults.takeFinalStatus();
        if (final) {
          this.#update(id, {
            status: final.status,
            subStatus: final.subStatus ?? defaultSubStatus(final.status),
          });
          return;
        }
        if (this.#ctx.faults.takeHold()) {
          this.#update(id, { status: "PENDING_AUTHORIZATION" });
          return;
        }
        this.#update(id, { status: "PENDING_SIGNATURE" });
        status = "PENDING_SIGNATURE";
      }
      if (status === "PENDING_AUTHORIZATION") return;
      row = this.#row(id)!;
      const req = this.#request(row);
      if (status === "PENDING_SIGNATURE") {
        if (req.kind === "message") await this.#signMessages(id, req);
        else await this.#signAndSend(id, req);
        return;
      }
      if (status === "BROADCASTING") {
        await this.#rebroadcast(id, row, req as ChainRequest);
        return;
      }
      if (status === "CONFIRMING") this.#watch(id);
    } finally {
      this.#running.delete(id);
    }
  }

  async #signMessages(id: string, req: MessageRequest): Promise<void> {
    const account = this.#ctx.keys.account(req.accountId);
    const signedMessages = [];
    for (const m of req.messages) {
      let sig: Hex;
      let hash: Hex;
      if (m.type === "EIP712") {
        const args = typedDataArgs(m.content as Record<string, unknown>);
        hash = hashTypedData(args);
        sig = await account.signTypedData(args);
      } else {
        const msg = messageBytes(m.content);
        hash = hashMessage(msg);
        sig = await account.signMessage({ message: msg });
      }
      const p = parseSignature(sig);
      const r = p.r.slice(2).padStart(64, "0");
      const s = p.s.slice(2).padStart(64, "0");
      signedMessages.push({
        content: hash.slice(2),
        algorithm: "MPC_ECDSA_SECP256K1",
        derivationPath: [44, 60, 0, 0, req.accountId],
        signature: { fullSig: r + s, r, s, v: p.yParity ?? 0 },
        publicKey: compressedPublicKey(account.publicKey),
      });
    }
    this.#update(id, { status: "COMPLETED", subStatus: "CONFIRMED", signedMessages });
  }

  async #withLock<T>(accountId: number, fn: () => Promise<T>): Promise<T> {
    const prev = this.#locks.get(accountId) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => {});
    this.#locks.set(accountId, tail);
    try {
      return await next;
    } finally {
      if (this.#locks.get(accountId) === tail) this.#locks.delete(accountId);
    }
  }

  async #fees(req: ChainRequest): Promise<Fees> {
    if (req.fees.kind === "eip1559") {
      return {
        type: "eip1559",
        maxFeePerGas: req.fees.maxFee,
        maxPriorityFeePerGas: req.fees.priorityFee,
      };
    }
    if (req.fees.kind === "legacy") return { type: "legacy", gasPrice: req.fees.gasPrice };
    return await this.#ctx.chain.fees(req.fees.level);
  }

  async #signAndSend(id: string, req: ChainRequest): Promise<void> {
    const ctx = this.#ctx;
    const client = ctx.chain.client;
    const account = ctx.keys.account(req.accountId);
    let gas = req.gasLimit;
    let fees: Fees;
    try {
      fees = await this.#fees(req);
    } catch (e) {
      const c = classifyNodeError(e);
      return this.#fail(
        id,
        c.subStatus === "ERROR_BROADCASTING" ? "NETWORK_ERROR" : c.subStatus,
        c.description,
      );
    }
    if (gas === undefined) {
      try {
        gas = await client.estimateGas({
          account: account.address,
          to: req.to,
          value: req.value,
          data: req.data,
        });
      } catch (e) {
        const c = classifyNodeError(e);
        return this.#fail(
          id,
          c.subStatus === "ERROR_BROADCASTING" ? "SMART_CONTRACT_EXECUTION_FAILED" : c.subStatus,
          c.description,
        );
      }
    }
    let sent: Hex | undefined;
    await this.#withLock(req.accountId, async () => {
      for (let attempt = 0; attempt < 2; attempt++) {
        if (this.#stopped) return;
        // forced to a final status (admin) while waiting for the lock: nothing to send
        if (this.get(id)?.status !== "PENDING_SIGNATURE") return;
        let nonce = this.#nonces.get(req.accountId);
        if (nonce === undefined) {
          try {
            nonce = await client.getTransactionCount({
              address: account.address,
              blockTag: "pending",
            });
          } catch (e) {
            const c = classifyNodeError(e);
            return this.#fail(id, "NETWORK_ERROR", c.description);
          }
        }
        const base = {
          chainId: ctx.config.chainId,
          to: req.to ?? null,
          value: req.value,
          data: req.data,
          gas,
          nonce,
        };
        const raw = fees.type === "eip1559"
          ? await account.signTransaction({
            ...base,
            type: "eip1559",
            maxFeePerGas: fees.maxFeePerGas,
            maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
          })
          : await account.signTransaction({ ...base, type: "legacy", gasPrice: fees.gasPrice });
        const hash = keccak256(raw);
        const feeInfo = fees.type === "eip1559"
          ? {
            maxFee: formatGwei(fees.maxFeePerGas),
            priorityFee: formatGwei(fees.maxPriorityFeePerGas),
          }
          : { gasPrice: formatGwei(fees.gasPrice) };
        this.#update(id, {
          status: "BROADCASTING",
          txHash: hash,
          nonce: String(nonce),
          gasLimit: gas!.toString(),
          ...(fees.type === "eip1559"
            ? { maxFee: feeInfo.maxFee, priorityFee: feeInfo.priorityFee }
            : { gasPrice: feeInfo.gasPrice }),
        }, { raw, nonce });
        try {
          await client.request({ method: "eth_sendRawTransaction", params: [raw] });
          this.#nonces.set(req.accountId, nonce + 1);
          this.#update(id, { status: "CONFIRMING" });
          sent = hash;
          return;
        } catch (e) {
          this.#nonces.delete(req.accountId);
          const c = classifyNodeError(e);
          if (c.subStatus === "INVALID_NONCE" && attempt === 0) {
            ctx.log(
              `transaction ${id}: nonce ${nonce} refused (${c.description}); retrying with the node's nonce`,
            );
            this.#update(id, { status: "PENDING_SIGNATURE", txHash: "" }, {
              raw: null,
              nonce: null,
            });
            continue;
          }
          return this.#fail(id, c.subStatus, c.description);
        }
      }
    });
    if (sent) await this.#confirmNow(id, sent);
  }

  /**
   * Looks for the receipt at once (a node that mines on every transaction,
   * like anvil by default, has it already), else leaves it to the watcher.
   */
  async #confirmNow(id: string, hash: Hex): Promise<void> {
    let receipt: TransactionReceipt | undefined;
    try {
      receipt = await this.#receipt(hash);
    } catch { /* the watcher retries */ }
    if (receipt && !this.#stopped) this.#complete(id, receipt);
    else this.#watch(id);
  }

  async #rebroadcast(id: string, row: Row, req: ChainRequest): Promise<void> {
    const raw = row.raw_tx as Hex | null;
    if (!raw) {
      this.#update(id, { status: "PENDING_SIGNATURE", txHash: "" });
      return await this.#signAndSend(id, req);
    }
    await this.#withLock(req.accountId, async () => {
      try {
        await this.#ctx.chain.client.request({ method: "eth_sendRawTransaction", params: [raw] });
      } catch (e) {
        const c = classifyNodeError(e);
        const known = /already known|already imported|known transaction/i.test(c.description);
        if (!known) {
          // maybe it was mined before the restart
          const receipt = await this.#receipt(String(row.tx_hash));
          if (!receipt) return this.#fail(id, c.subStatus, c.description);
        }
      }
      this.#update(id, { status: "CONFIRMING" });
      this.#watch(id);
    });
  }

  // ---- confirmations -------------------------------------------------------

  async #receipt(hash: string): Promise<TransactionReceipt | undefined> {
    try {
      return await this.#ctx.chain.client.getTransactionReceipt({ hash: hash as Hex });
    } catch (e) {
      if ((e as Error)?.name === "TransactionReceiptNotFoundError") return undefined;
      throw e;
    }
  }

  #watch(id: string): void {
    this.#confirming.set(id, -1n);
    if (!this.#confirmLoop) {
      this.#confirmLoop = this.#confirmWork().finally(() => this.#confirmLoop = undefined);
    }
  }

  async #confirmWork(): Promise<void> {
    const client = this.#ctx.chain.client;
    while (this.#confirming.size > 0 && !this.#stopped) {
      let block: bigint;
      try {
        block = await client.getBlockNumber({ cacheTime: 0 });
      } catch (e) {
        this.#ctx.log(`cannot read the block number: ${classifyNodeError(e).description}`);
        await sleep(this.pollMs * 10);
        continue;
      }
      const due = [...this.#confirming].filter(([, at]) => at < block).map(([id]) => id);
      await Promise.all(due.map(async (id) => {
        const t = this.get(id);
        if (!t || t.status !== "CONFIRMING") {
          this.#confirming.delete(id);
          return;
        }
        let receipt: TransactionReceipt | undefined;
        try {
          receipt = await this.#receipt(t.txHash);
        } catch {
          return;
        }
        if (!receipt) {
          this.#confirming.set(id, block);
          return;
        }
        this.#confirming.delete(id);
        if (this.#stopped) return;
        this.#complete(id, receipt);
      }));
      if (this.#confirming.size > 0) await sleep(this.pollMs);
    }
  }

  #complete(id: string, receipt: TransactionReceipt): void {
    const networkFee = formatEther(receipt.gasUsed * receipt.effectiveGasPrice);
    const common = {
      blockInfo: { blockHeight: receipt.blockNumber.toString(), blockHash: receipt.blockHash },
      numOfConfirmations: 1,
      networkFee: Number(networkFee),
      fee: Number(networkFee),
      feeInfo: { networkFee, gasPrice: formatGwei(receipt.effectiveGasPrice) },
      networkRecords: [],
      ...(receipt.contractAddress ? { contractAddress: receipt.contractAddress } : {}),
    };
    if (receipt.status === "success") {
      this.#update(id, { ...common, status: "COMPLETED", subStatus: "CONFIRMED" });
    } else {
      this.#update(id, {
        ...common,
        status: "FAILED",
        subStatus: "SMART_CONTRACT_EXECUTION_FAILED",
        errorDescription: "The transaction was mined but reverted.",
      });
    }
  }

  // ---- admin ---------------------------------------------------------------

  #require(id: string): TransactionRecord {
    const t = this.get(id);
    if (!t) throw new ApiError(404, `Transaction "${id}" not found.`, ErrorCode.notFound);
    return t;
  }

  /** Lets a held (PENDING_AUTHORIZATION) transaction continue. */
  approve(id: string): TransactionRecord {
    const t = this.#require(id);
    if (t.status !== "PENDING_AUTHORIZATION") {
      throw new ApiError(
        400,
        `Transaction "${id}" is ${t.status}, not PENDING_AUTHORIZATION.`,
        ErrorCode.badRequest,
      );
    }
    const out = this.#update(id, { status: "PENDING_SIGNATURE" });
    this.#schedule(id);
    return out;
  }

  /** Forces a final status on a transaction that has not ended yet. */
  force(id: string, status: string, subStatus?: string): TransactionRecord {
    const t = this.#require(id);
    if (FINAL_STATUSES.has(t.status)) {
      throw new ApiError(
        400,
        `Transaction "${id}" already ended: ${t.status}.`,
        ErrorCode.badRequest,
      );
    }
    this.#confirming.delete(id);
    return this.#update(id, { status, subStatus: subStatus ?? defaultSubStatus(status) });
  }

  /** Cancels a transaction that was not signed yet. */
  cancel(id: string): void {
    const t = this.#require(id);
    if (!["SUBMITTED", "QUEUED", "PENDING_AUTHORIZATION"].includes(t.status)) {
      throw new ApiError(
        400,
        `Transaction "${id}" is ${t.status}: only a transaction not yet signed can be cancelled.`,
        ErrorCode.badRequest,
      );
    }
    this.#update(id, { status: "CANCELLED", subStatus: "CANCELLED_BY_USER" });
  }

  // ---- lifecycle -----------------------------------------------------------

  /** Resumes the walk of every unfinished transaction (after a restart). */
  resume(): void {
    const rows = this.#stmts.unfinished.all() as Row[];
    for (const r of rows) this.#schedule(String(r.id));
    if (rows.length) this.#ctx.log(`resuming ${rows.length} unfinished transaction(s)`);
  }

  /** Stops the walk (unfinished transactions resume after a restart). */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.allSettled([...this.#tasks]);
    await this.#confirmLoop;
  }
}

function defaultSubStatus(status: string): string {
  switch (status) {
    case "REJECTED":
      return "REJECTED_BY_USER";
    case "BLOCKED":
      return "BLOCKED_BY_POLICY";
    case "CANCELLED":
      return "CANCELLED_BY_USER";
    case "TIMEOUT":
      return "TIMEOUT";
    default:
      return "";
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
