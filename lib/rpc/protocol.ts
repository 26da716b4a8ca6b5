/**
 * JSON-RPC 2.0 envelopes: parsing a message (single or batch), validating
 * requests, building success and error responses. The numeric error codes
 * live here once ({@linkcode RpcError}), and so does the one mapping from any
 * thrown value to a JSON-RPC error ({@linkcode toRpcError}, by `instanceof`);
 * transports only serialise what this module returns.
 *
 * @module
 */

import { BaseError, type BaseErrorOptions } from "../core/mod.ts";
import { redact } from "../core/redact.ts";
import {
  PlatformApiError,
  PlatformResponseError,
  PlatformTimeoutError,
  PlatformUnreachableError,
} from "../platform/errors.ts"; // not the barrel: it loads every platform area
import { UpstreamError } from "./upstream.ts";

/** A request id: a string, a number or null (absent = notification). */
export type RpcId = string | number | null;

/** A validated request. `id` is `undefined` for a notification. */
export interface RpcRequest {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: string;
  /** Positional or named parameters. */
  params?: unknown[] | Record<string, unknown>;
  /** The id; absent for a notification. */
  id?: RpcId;
}

/** A JSON-RPC error object. */
export interface RpcErrorObject {
  /** The numeric error code. */
  code: number;
  /** A one-line message for the caller. */
  message: string;
  /** Extra data (e.g. the platform transaction id). */
  data?: unknown;
}

/** A response: `result` or `error`. */
export type RpcResponse =
  | { jsonrpc: "2.0"; id: RpcId; result: unknown }
  | { jsonrpc: "2.0"; id: RpcId; error: RpcErrorObject };

/** An address: `0x` and 40 hex digits (any case). */
export const ADDRESS: RegExp = /^0x[0-9a-fA-F]{40}$/;

/** The codes this bridge answers with (JSON-RPC 2.0 and EIP-1193/EIP-1474). */
export const RpcErrorCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  /** EIP-1474 "server error": the operation failed (e.g. the platform refused it). */
  server: -32000,
  /** EIP-1474 "resource unavailable": the upstream node cannot be reached. */
  unavailable: -32002,
  /** EIP-1193 "user rejected": the transaction was rejected in custody. */
  userRejected: 4001,
  /** EIP-1193 "unauthorized": the address is not one of the exposed accounts. */
  unauthorized: 4100,
  /** EIP-1193 "unsupported method". */
  unsupportedMethod: 4200,
} as const;

/**
 * An error meant for a JSON-RPC caller, with its numeric code.
 *
 * @example
 * ```ts
 * throw new RpcError(RpcErrorCode.invalidParams, 'eth_sign: expected [address, data]');
 * ```
 */
export class RpcError extends BaseError {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** Extra data for the caller (e.g. the platform transaction id and status). */
  readonly data: unknown;
  /** Creates an error with its code, message and optional data. */
  constructor(code: number, message: string, data?: unknown, options?: BaseErrorOptions) {
    super(message, options);
    this.name = "RpcError";
    this.code = code;
    this.data = data;
  }

  /** The wire form; its message redacted (`lib/core/redact.ts`: the platform may echo a secret). */
  toJSON(): RpcErrorObject {
    const message = redact(this.message);
    return this.data === undefined
      ? { code: this.code, message }
      : { code: this.code, message, data: this.data };
  }
}

/** Builds a success response. */
export function success(id: RpcId, result: unknown): RpcResponse {
  return { jsonrpc: "2.0", id, result: result === undefined ? null : result };
}

/**
 * The one mapping from a thrown value to the JSON-RPC error a caller gets:
 * an {@linkcode RpcError} as it is; the upstream node failing as -32002
 * ("resource unavailable") with its reason; a platform failure as
 * a server error with its message (and HTTP status, platform code and request
 * id as `data`); a request abandoned because the bridge stops; anything else
 * as -32603 with a generic message, so that no internal detail (or secret)
 * leaks.
 *
 * @example
 * ```ts
 * toRpcError(new Error("secret detail")).toJSON(); // { code: -32603, message: "Internal error of the bridge." }
 * ```
 */
export function toRpcError(e: unknown): RpcError {
  if (e instanceof RpcError) return e;
  if (e instanceof UpstreamError) {
    return new RpcError(RpcErrorCode.unavailable, `Upstream node unavailable: ${e.message}`);
  }
  if (
    e instanceof PlatformApiError || e instanceof PlatformUnreachableError ||
    e instanceof PlatformTimeoutError || e instanceof PlatformResponseError
  ) {
    const data = e instanceof PlatformApiError
      ? { httpStatus: e.status, platformCode: e.code, requestId: e.requestId }
      : undefined;
    return new RpcError(RpcErrorCode.server, e.message, data, { cause: e });
  }
  if (e instanceof DOMException && e.code === DOMException.ABORT_ERR) {
    return new RpcError(RpcErrorCode.server, "The bridge is stopping; the request was abandoned.");
  }
  return new RpcError(RpcErrorCode.internal, "Internal error of the bridge.", undefined, {
    cause: e,
  });
}

/**
 * Builds an error response from any thrown value, through
 * {@linkcode toRpcError}.
 */
export function failure(id: RpcId, error: unknown): RpcResponse {
  return { jsonrpc: "2.0", id, error: toRpcError(error).toJSON() };
}

/** The text of an error answer to a message whose id could not be read (`id` null). */
export function errorText(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } });
}

/** Default largest batch (geth's default batch limit): see {@linkcode classify}. */
export const DEFAULT_MAX_BATCH = 1000;

/** The id the bridge puts on a single request it sends to the node (answers are matched per connection). */
export const UPSTREAM_ID = 1;

/**
 * The request as the bridge sends it to the node: the envelope rebuilt
 * (`jsonrpc`, the bridge's own `id`, `method`, `params`; any other member
 * dropped), so that single requests and batch elements reach the node alike
 * and the client's id never depends on what the node accepts as an id
 * (anvil refuses `1.5`, `1.0` and ids above 2^64; the caller gets its own id
 * back from {@linkcode answerText} / {@linkcode answerFrom}). Without `id`, a
 * notification.
 */
export function upstreamRequest(request: RpcRequest, id?: number): Record<string, unknown> {
  const out: Record<string, unknown> = { jsonrpc: "2.0" };
  if (id !== undefined) out.id = id;
  out.method = request.method;
  if (request.params !== undefined) out.params = request.params;
  return out;
}

/** {@linkcode upstreamRequest} as text. */
export function upstreamText(request: RpcRequest, id?: number): string {
  return JSON.stringify(upstreamRequest(request, id));
}

const NO_ANSWER = "The upstream node gave no valid answer for this request.";

/**
 * The client's answer from the node's decoded answer to one request: the
 * client's `id`, the node's `result` or `error`, nothing else.
 */
export function answerFrom(answer: unknown, id: RpcId): RpcResponse {
  if (answer !== null && typeof answer === "object" && !Array.isArray(answer)) {
    const a = answer as Record<string, unknown>;
    if (a.error !== null && typeof a.error === "object" && !Array.isArray(a.error)) {
      return { jsonrpc: "2.0", id, error: a.error as RpcErrorObject };
    }
    if ("result" in a) return { jsonrpc: "2.0", id, result: a.result };
  }
  return failure(id, new RpcError(RpcErrorCode.internal, NO_ANSWER));
}

/**
 * The client's answer, as text, from the text of the node's answer to a
 * request sent with id `sentId`. The usual layout
 * (`{"jsonrpc":"2.0","id":<sentId>,"result"…` or `…"error"…`, as geth and
 * anvil write it) only has its id replaced, without decoding the body; any
 * other layout is decoded and rebuilt by {@linkcode answerFrom}.
 *
 * @example
 * ```ts
 * answerText('{"jsonrpc":"2.0","id":1,"result":"0x10"}', 1, 1.5); // '{"jsonrpc":"2.0","id":1.5,"result":"0x10"}'
 * ```
 */
export function answerText(text: string, sentId: number, id: RpcId): string {
  const head = `{"jsonrpc":"2.0","id":${sentId},`;
  if (text.startsWith(head)) {
    const rest = text.slice(head.length);
    if (rest.startsWith('"result":') || rest.startsWith('"error":')) {
      return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},${rest}`;
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return JSON.stringify(
      failure(id, new UpstreamError("the node answered with something that is not JSON")),
    );
  }
  return JSON.stringify(answerFrom(value, id));
}

/** What {@linkcode classify} found. */
export type ParsedMessage =
  | { kind: "single"; request: RpcRequest | RpcError; id: RpcId }
  | { kind: "batch"; items: { request: RpcRequest | RpcError; id: RpcId }[] }
  | { kind: "error"; error: RpcError };

/**
 * Validates one decoded JSON value as a request. Returns the request or an
 * {@linkcode RpcError} (-32600) to answer with.
 */
export function validateRequest(value: unknown): RpcRequest | RpcError {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return invalidRequest("expected a JSON object.");
  }
  const v = value as Record<string, unknown>;
  if (v.jsonrpc !== "2.0") return invalidRequest('"jsonrpc" must be "2.0".');
  if (typeof v.method !== "string" || v.method === "") {
    return invalidRequest('"method" must be a non-empty string.');
  }
  const id = v.id;
  if (
    "id" in v && id !== null && typeof id !== "string" && typeof id !== "number" && !isRawJson(id)
  ) {
    return invalidRequest('"id" must be a string, a number or null.');
  }
  if (v.params !== undefined && (v.params === null || typeof v.params !== "object")) {
    return invalidRequest('"params" must be an array or an object.');
  }
  return v as unknown as RpcRequest;
}

/** A -32600 error: `Invalid request: ` and why. */
function invalidRequest(why: string): RpcError {
  return new RpcError(RpcErrorCode.invalidRequest, `Invalid request: ${why}`);
}

function idOf(value: unknown): RpcId {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const id = (value as Record<string, unknown>).id;
    if (typeof id === "string" || typeof id === "number" || isRawJson(id)) return id as RpcId;
  }
  return null;
}

const RAW_JSON = JSON as unknown as {
  rawJSON(text: string): unknown;
  isRawJSON(value: unknown): boolean;
};

/** True for an id kept as its raw text (see {@linkcode exactIds}). */
function isRawJson(value: unknown): boolean {
  return typeof value === "object" && value !== null && RAW_JSON.isRawJSON(value);
}

/** A number id that JSON.stringify would not write back as sent (1e400, 30 digits, -0, 1.50). */
function inexact(id: unknown): boolean {
  return typeof id === "number" && (!Number.isSafeInteger(id) || Object.is(id, -0));
}

/** Whether `v` is an object whose numeric `id` JSON.parse may have rounded. */
const hasInexactId = (v: unknown): boolean =>
  v !== null && typeof v === "object" && inexact((v as { id?: unknown }).id);

/**
 * The decoded message `value` of `text` with each request's numeric `id` that
 * a number cannot hold exactly (`1e400`, a 30-digit id, `-0`, `1.50`) kept as
 * its raw text (`JSON.rawJSON`), so that the answer echoes it exactly as sent.
 * Ordinary ids cost one check; only a message with such an id is parsed again.
 *
 * @example
 * ```ts
 * const text = '{"jsonrpc":"2.0","id":1e400,"method":"eth_chainId"}';
 * JSON.stringify(exactIds(JSON.parse(text), text)); // '{"jsonrpc":"2.0","id":1e400,...}'
 * ```
 */
export function exactIds(value: unknown, text: string): unknown {
  if (Array.isArray(value) ? !value.some(hasInexactId) : !hasInexactId(value)) return value;
  const sources = new Map<object, string>();
  const again = JSON.parse(
    text,
    function (this: object, key: string, v: unknown, context?: { source?: string }) {
      if (key === "id" && typeof v === "number" && context?.source) {
        sources.set(this, context.source);
      }
      return v;
    },
  );
  for (const item of Array.isArray(again) ? again : [again]) {
    const source = item !== null && typeof item === "object" ? sources.get(item) : undefined;
    if (source !== undefined) item.id = RAW_JSON.rawJSON(source);
  }
  return again;
}

/** True when the request expects no answer (no `id` member). */
export function isNotification(request: RpcRequest): boolean {
  return !("id" in request);
}

/**
 * Sorts one decoded message (an HTTP body, a WebSocket message or an IPC
 * frame) into a single request, a batch, or an error to answer. A batch of
 * more than `maxBatch` elements (default {@linkcode DEFAULT_MAX_BATCH}) is
 * refused as a whole with one -32600 error, as geth does, before any element
 * runs.
 *
 * @example
 * ```ts
 * classify({ jsonrpc: "2.0", id: 1, method: "eth_chainId" }).kind; // "single"
 * classify([]).kind; // "error" (-32600: empty batch)
 * ```
 */
export function classify(value: unknown, maxBatch = DEFAULT_MAX_BATCH): ParsedMessage {
  if (Array.isArray(value)) {
    if (value.length === 0) return { kind: "error", error: invalidRequest("empty batch.") };
    if (value.length > maxBatch) {
      return { kind: "error", error: batchTooLarge(value.length, maxBatch) };
    }
    return {
      kind: "batch",
      items: value.map((v) => ({ request: validateRequest(v), id: idOf(v) })),
    };
  }
  return { kind: "single", request: validateRequest(value), id: idOf(value) };
}

/** The error for a batch of `size` elements over the limit `maxBatch`. */
export function batchTooLarge(size: number, maxBatch: number): RpcError {
  return invalidRequest(
    `the batch has ${size} requests; the limit is ${maxBatch}. Send smaller batches (or raise the bridge's --maxBatch).`,
  );
}

/** The params as an array (`[]` when absent; an object becomes `[object]`). */
export function paramsOf(request: RpcRequest): unknown[] {
  const p = request.params;
  if (p === undefined) return [];
  return Array.isArray(p) ? p : [p];
}
