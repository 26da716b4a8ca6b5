/**
 * Signing of TYPED_MESSAGE transactions (ETH_MESSAGE and EIP712) with a vault
 * key, and reading of their content: what a request's message becomes
 * (bytes or text for ETH_MESSAGE, a typed-data object for EIP712), and the
 * `signedMessages` entries the platform returns.
 *
 * @module
 */

import {
  hashMessage,
  hashTypedData,
  type Hex,
  isHex,
  parseSignature,
  type PrivateKeyAccount,
} from "viem";
import { fromHex } from "../../core/mod.ts";
import { bad } from "../http/params.ts";

/** One message of a checked TYPED_MESSAGE request. */
export interface CheckedMessage {
  /** `ETH_MESSAGE` (personal_sign) or `EIP712` (typed data). */
  type: "ETH_MESSAGE" | "EIP712";
  /** Hex or text for ETH_MESSAGE; the typed-data object for EIP712. */
  content: unknown;
  /** The message's index in the request. */
  index: number;
}

/**
 * An EIP712 message's content (the typed-data object or its JSON), checked to
 * have `types` and `primaryType`. Throws `BadRequestError`.
 *
 * @example
 * ```ts
 * parseTypedData('{"types":{},"primaryType":"Mail","domain":{},"message":{}}');
 * ```
 */
export function parseTypedData(content: unknown): Record<string, unknown> {
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

/**
 * The arguments viem's `hashTypedData` / `signTypedData` take for a
 * typed-data object (missing `domain` and `message` become `{}`).
 *
 * @example
 * ```ts
 * import { hashTypedData } from "viem";
 * declare const content: unknown; // an EIP712 message's content, as the request gave it
 * hashTypedData(typedDataArgs(parseTypedData(content)));
 * ```
 */
// viem's typed-data types are generic over the schema, unknown here
// deno-lint-ignore no-explicit-any
export function typedDataArgs(o: Record<string, unknown>): any {
  return {
    domain: o.domain ?? {},
    types: { ...(o.types as Record<string, unknown>) },
    primaryType: o.primaryType,
    message: o.message ?? {},
  };
}

/**
 * What an ETH_MESSAGE content signs: its bytes when it is hex (with or
 * without `0x`), else the text. Throws `BadRequestError` when it
 * is not a string.
 *
 * @example
 * ```ts
 * messageBytes("68656c6c6f"); // { raw: Uint8Array [104, 101, 108, 108, 111] }
 * messageBytes("hello world"); // "hello world"
 * ```
 */
export function messageBytes(content: unknown): { raw: Uint8Array } | string {
  if (typeof content !== "string") bad("An ETH_MESSAGE content must be a string (hex).");
  const hex = content.startsWith("0x") ? content : `0x${content}`;
  if (isHex(hex) && hex.length % 2 === 0) return { raw: fromHex(hex.slice(2)) };
  return content;
}

function compressedPublicKey(uncompressed: Hex): string {
  const x = uncompressed.slice(4, 68);
  const yLast = parseInt(uncompressed.slice(-2), 16);
  return `${yLast % 2 === 0 ? "02" : "03"}${x}`;
}

/**
 * Signs each message with `account` (vault account `accountId`) and returns
 * the `signedMessages` entries of the record.
 *
 * @example
 * ```ts
 * import type { VaultKeys } from "../vault/keys.ts";
 * declare const keys: VaultKeys;
 * const signed = await signMessages(keys.account(0), 0, [
 *   { type: "ETH_MESSAGE", content: "68656c6c6f", index: 0 },
 * ]);
 * ```
 */
export async function signMessages(
  account: PrivateKeyAccount,
  accountId: number,
  messages: readonly CheckedMessage[],
): Promise<Record<string, unknown>[]> {
  const signedMessages = [];
  for (const m of messages) {
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
      derivationPath: [44, 60, 0, 0, accountId],
      signature: { fullSig: r + s, r, s, v: p.yParity ?? 0 },
      publicKey: compressedPublicKey(account.publicKey),
    });
  }
  return signedMessages;
}
