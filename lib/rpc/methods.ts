/**
 * The method table: which JSON-RPC methods the bridge answers itself (chain
 * id, accounts, sending and signing through custody) and which go to the
 * upstream node (method and params unchanged, the envelope rebuilt with the
 * bridge's own id: see `upstreamRequest` in `protocol.ts`).
 * {@linkcode Dispatcher.handleValue} takes one decoded message (single or
 * batch) and returns the text to answer, or `undefined` when nothing must be
 * answered (notifications only).
 *
 * @module
 */

import {
  ADDRESS,
  answerFrom,
  classify,
  DEFAULT_MAX_BATCH,
  failure,
  isNotification,
  paramsOf,
  type ParsedMessage,
  RpcError,
  RpcErrorCode,
  type RpcId,
  type RpcRequest,
  type RpcResponse,
  success,
  toRpcError,
  upstreamRequest,
  upstreamText,
} from "./protocol.ts";
import { messageOf, nextMacrotask, toHex } from "../core/mod.ts";
import { type Upstream, UpstreamError } from "./upstream.ts";
import { UpstreamBatcher } from "./upstream_batcher.ts";
import type { SendClient } from "./send_book.ts";

/** What signs and sends through the platform (see `custody.ts`). */
export interface Signer {
  /** The exposed addresses, checksummed, in vault-account order. */
  accounts(signal?: AbortSignal): Promise<string[]>;
  /**
   * Sends a transaction through custody; resolves with its hash. `client`
   * tells when the client that asked has gone (a repeat may then join it).
   */
  sendTransaction(
    tx: Record<string, unknown>,
    signal?: AbortSignal,
    client?: SendClient,
  ): Promise<string>;
  /** Lines describing the sends still under way (printed when the bridge stops); optional. */
  unfinished?(): string[];
  /** EIP-191 signature of `data` (hex) by `address`. */
  signMessage(address: string, dataHex: string, signal?: AbortSignal): Promise<string>;
  /** EIP-712 signature of `typedData` by `address`. */
  signTypedData(address: string, typedData: unknown, signal?: AbortSignal): Promise<string>;
}

/** Options of {@linkcode Dispatcher}. */
export interface DispatcherOptions {
  /** The node reads go to. */
  upstream: Upstream;
  /** The chain id, checked against the node at start. */
  chainId: bigint;
  /** Answer of `web3_clientVersion`. */
  clientVersion: string;
  /** Custody signer; without one the signing methods answer -32601. */
  signer?: Signer;
  /** Aborted when the bridge stops (ends waits on custody). */
  signal?: AbortSignal;
  /** Largest batch; a larger one is refused as a whole (-32600). Default 1,000 (geth's). */
  maxBatch?: number;
  /**
   * With `--verbose`: gets two lines per message, the request (`-> …`) and its answer
   * (`<- … (N ms)`), each cut to {@linkcode TRACE_CHARS} characters with its full size.
   * JSON-RPC messages carry no credential (those go to the platform, never through here).
   */
  trace?: (line: string) => void;
}

/** How much of a message `--verbose` prints (the rest is counted, not shown). */
export const TRACE_CHARS = 400;

function traceText(text: string): string {
  return text.length <= TRACE_CHARS
    ? text
    : `${text.slice(0, TRACE_CHARS)}… (${text.length} characters)`;
}

/**
 * What a transport knows of one request besides its message: when its
 * client has gone, and (HTTP) when its connection carries the next request
 * (`send_book.ts`'s {@linkcode SendClient}). Read only by the methods that
 * need it (a send that a repeat may join).
 */
export type CallContext = SendClient;

/**
 * A method answered by the bridge itself: gets the params array, the
 * dispatcher and the request's {@linkcode CallContext}.
 */
export type LocalMethod = (
  params: unknown[],
  d: Dispatcher,
  call?: CallContext,
) => Promise<unknown> | unknown;
type Local = LocalMethod;

const HEX = /^0x([0-9a-fA-F]{2})*$/;

/** A -32602 error (the caller's parameters are wrong). */
function badParams(message: string): RpcError {
  return new RpcError(RpcErrorCode.invalidParams, message);
}

function needSigner(d: Dispatcher): Signer {
  if (!d.signer) {
    throw new RpcError(RpcErrorCode.methodNotFound, "No custody signer is configured.");
  }
  return d.signer;
}

function address(value: unknown, method: string, position: string): string {
  if (typeof value !== "string" || !ADDRESS.test(value)) {
    throw badParams(
      `${method}: the ${position} parameter must be an address (0x + 40 hex digits).`,
    );
  }
  return value;
}

/** A message given as hex stays; any other string is taken as UTF-8 text. */
function messageHex(value: unknown, method: string): string {
  if (typeof value !== "string") {
    throw badParams(`${method}: the message must be a string.`);
  }
  if (HEX.test(value)) return value;
  return "0x" + toHex(value);
}

function typedDataOf(value: unknown, method: string): unknown {
  let v = value;
  if (typeof v === "string") {
    try {
      v = JSON.parse(v);
    } catch {
      throw badParams(`${method}: the typed data is a string but not JSON.`);
    }
  }
  if (Array.isArray(v)) {
    throw badParams(
      `${method}: the legacy (v1) array form of typed data is not supported; send EIP-712 typed data ({types, domain, primaryType, message}).`,
    );
  }
  if (!v || typeof v !== "object" || !("types" in v) || !("message" in v)) {
    throw badParams(
      `${method}: expected EIP-712 typed data with types, domain, primaryType and message.`,
    );
  }
  return v;
}

/** `personal_sign` ([data, address]: the address at 1) or `eth_sign` ([address, data]: at 0). */
function signMessage(method: string, addressAt: 0 | 1): Local {
  return (params, d) =>
    needSigner(d).signMessage(
      address(params[addressAt], method, addressAt === 0 ? "first" : "second"),
      messageHex(params[1 - addressAt], method),
      d.signal,
    );
}

function signTypedData(method: string): Local {
  return (params, d) => {
    // [address, typedData]; tolerate the reversed order some v1 clients use.
    let [a, t] = params;
    if (typeof t === "string" && ADDRESS.test(t) && !(typeof a === "string" && ADDRESS.test(a))) {
      [a, t] = [t, a];
    }
    const typed = typedDataOf(t, method) as { domain?: { chainId?: unknown } };
    const domainChain = typed.domain?.chainId;
    if (domainChain !== undefined && domainChain !== null) {
      let id: bigint | undefined;
      try {
        id = BigInt(domainChain as string | number);
      } catch { /* reported below */ }
      if (id !== d.chainId) {
        throw badParams(
          `${method}: the typed data's domain.chainId ${
            JSON.stringify(domainChain)
          } is not this bridge's chain ${d.chainId}; refusing to sign for another chain.`,
        );
      }
    }
    return needSigner(d).signTypedData(address(a, method, "first"), typed, d.signal);
  };
}

/** The methods answered by the bridge itself. */
export const LOCAL_METHODS: Readonly<Record<string, LocalMethod>> = {
  eth_chainId: (_p, d) => "0x" + d.chainId.toString(16),
  net_version: (_p, d) => d.chainId.toString(10),
  web3_clientVersion: (_p, d) => d.clientVersion,
  eth_accounts: (_p, d) => d.signer ? d.signer.accounts(d.signal) : [],
  eth_requestAccounts: (_p, d) => needSigner(d).accounts(d.signal),
  eth_coinbase: async (_p, d) => (d.signer ? (await d.signer.accounts(d.signal))[0] : null) ?? null,
  eth_sendTransaction: (params, d, call) => {
    const tx = params[0];
    if (!tx || typeof tx !== "object" || Array.isArray(tx)) {
      throw badParams("eth_sendTransaction: expected [transaction object].");
    }
    return needSigner(d).sendTransaction(tx as Record<string, unknown>, d.signal, call);
  },
  personal_sign: signMessage("personal_sign", 1),
  eth_sign: signMessage("eth_sign", 0),
  eth_signTypedData: signTypedData("eth_signTypedData"),
  eth_signTypedData_v3: signTypedData("eth_signTypedData_v3"),
  eth_signTypedData_v4: signTypedData("eth_signTypedData_v4"),
  // Subscriptions live on a stream connection (WebSocket, IPC), which passes its own methods.
  eth_subscribe: () => {
    throw new RpcError(
      RpcErrorCode.methodNotFound,
      "eth_subscribe needs a stream connection: use the WebSocket address (ws://…) or the IPC socket, or poll (eth_newFilter + eth_getFilterChanges).",
    );
  },
  eth_unsubscribe: () => false,
  // geth's personal_* names for the same operations
  personal_sendTransaction: (params, d, call) =>
    LOCAL_METHODS.eth_sendTransaction([params[0]], d, call),
  personal_listAccounts: (_p, d) => d.signer ? d.signer.accounts(d.signal) : [],
  eth_signTransaction: () => {
    throw new RpcError(
      RpcErrorCode.unsupportedMethod,
      "eth_signTransaction is not supported: the custody platform signs and broadcasts in one step and never hands out a signed transaction. Use eth_sendTransaction.",
    );
  },
  wallet_switchEthereumChain: (params, d) => {
    const want = (params[0] as { chainId?: unknown } | undefined)?.chainId;
    if (typeof want === "string" && BigInt(want) === d.chainId) return null;
    throw new RpcError(
      4902,
      `This bridge serves chain ${d.chainId} only; start another bridge with --chainId for another chain.`,
    );
  },
};

/** The connection's own method, else the table's, else `undefined` (pass-through). */
function localMethod(
  method: string,
  extra: Readonly<Record<string, LocalMethod>> | undefined,
): LocalMethod | undefined {
  if (extra && Object.hasOwn(extra, method)) return extra[method];
  return Object.hasOwn(LOCAL_METHODS, method) ? LOCAL_METHODS[method] : undefined;
}

/**
 * Signing and key-management methods never go to the node, which may hold
 * keys of its own (anvil's unlocked dev accounts): those not answered above
 * are refused with -32601 (method not found), as a node answers a method it
 * does not serve. Clients rely on that code: viem retries a failed
 * `eth_sendTransaction` as `wallet_sendTransaction` and rethrows the first
 * error (the bridge's "nonce too low", a BLOCKED transaction's reason) only
 * when the fallback answers -32601 or -32004; any other code hides it.
 * `wallet_sendTransaction` is not served as `eth_sendTransaction` on purpose:
 * that retry would send a refused transaction a second time.
 */
export function isKeyMethod(method: string): boolean {
  return method.startsWith("personal_") || method.startsWith("eth_sign") ||
    method === "eth_sendTransaction" || method.startsWith("wallet_");
}

function refuseKeyMethod(method: string): RpcError {
  return new RpcError(
    RpcErrorCode.methodNotFound,
    `${method} is not supported: accounts here sign through the custody platform (see eth_accounts, eth_sendTransaction, personal_sign, eth_signTypedData_v4).`,
  );
}

/** Any failure of a call to the upstream node, as the error it gives each request. */
function upstreamFailure(e: unknown): RpcError {
  return toRpcError(e instanceof UpstreamError ? e : new UpstreamError(messageOf(e), { cause: e }));
}

function errorText(id: RpcId, error: RpcError): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: error.toJSON() });
}

/** Answers messages: local methods here, the rest from the upstream node. */
export class Dispatcher {
  /** The node reads go to. */
  readonly upstream: Upstream;
  /** The served chain id. */
  readonly chainId: bigint;
  /** Answer of `web3_clientVersion`. */
  readonly clientVersion: string;
  /** The custody signer, if any. */
  readonly signer: Signer | undefined;
  /** Aborted when the bridge stops. */
  readonly signal: AbortSignal | undefined;
  /** Largest batch answered. */
  readonly maxBatch: number;
  readonly #batcher: UpstreamBatcher;
  readonly #trace: ((line: string) => void) | undefined;
  /** The local calls under way (sends, signatures), for {@linkcode Dispatcher.settled}. */
  readonly #underWay = new Set<Promise<unknown>>();

  /** Builds a dispatcher from its options. */
  constructor(options: DispatcherOptions) {
    this.upstream = options.upstream;
    this.chainId = options.chainId;
    this.clientVersion = options.clientVersion;
    this.signer = options.signer;
    this.signal = options.signal;
    this.maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH;
    this.#batcher = new UpstreamBatcher(options.upstream);
    this.#trace = options.trace;
  }

  /**
   * Answers a decoded message; `undefined` when no answer is due (a
   * notification, or a batch of notifications only). Never throws. One envelope rule for single
   * requests and batch elements alike: validated here, sent to the node
   * rebuilt with the bridge's own id (`upstreamRequest`), answered with the
   * caller's id and the node's result or error (`answerText`/`answerFrom`).
   * `text` (the message's text, when the transport has it) is what `--verbose`
   * prints; `extra` are methods of the connection (its subscriptions) that
   * take precedence over the table; `call` is what the transport knows of the
   * request (see {@linkcode CallContext}).
   */
  handleValue(
    value: unknown,
    text?: string,
    extra?: Readonly<Record<string, LocalMethod>>,
    call?: CallContext,
  ): Promise<string | undefined> {
    if (this.#trace === undefined) return this.#answer(value, extra, call);
    return this.#traced(this.#trace, value, text, extra, call);
  }

  async #traced(
    trace: (line: string) => void,
    value: unknown,
    text: string | undefined,
    extra: Readonly<Record<string, LocalMethod>> | undefined,
    call: CallContext | undefined,
  ): Promise<string | undefined> {
    trace(`-> ${traceText(text ?? JSON.stringify(value) ?? String(value))}`);
    const t0 = performance.now();
    const answer = await this.#answer(value, extra, call);
    const ms = (performance.now() - t0).toFixed(1);
    trace(
      `<- ${answer === undefined ? "(no answer: a notification)" : traceText(answer)} (${ms} ms)`,
    );
    return answer;
  }

  /**
   * One decision per message. A request for the node (the hot path) returns the batcher's
   * promise as it is, with no further async step; the others are answered here or by `#local`.
   */
  #answer(
    value: unknown,
    extra: Readonly<Record<string, LocalMethod>> | undefined,
    call: CallContext | undefined,
  ): Promise<string | undefined> {
    const parsed: ParsedMessage = classify(value, this.maxBatch);
    if (parsed.kind === "error") return Promise.resolve(errorText(null, parsed.error));
    if (parsed.kind === "batch") return this.#batchText(parsed.items, extra, call);
    const { request, id } = parsed;
    if (request instanceof RpcError) return Promise.resolve(errorText(id, request));
    const local = localMethod(request.method, extra);
    if (local) {
      return this.#local(local, request, call)
        .then((response) => isNotification(request) ? undefined : JSON.stringify(response));
    }
    if (isKeyMethod(request.method)) {
      return Promise.resolve(
        isNotification(request) ? undefined : errorText(id, refuseKeyMethod(request.method)),
      );
    }
    if (isNotification(request)) {
      return this.upstream.send(upstreamText(request)).then(() => undefined, () => undefined);
    }
    return this.#batcher.send(request).catch((e) => errorText(id, upstreamFailure(e)));
  }

  /** A batch's answer text, or `undefined` when it held notifications only. */
  async #batchText(
    items: Extract<ParsedMessage, { kind: "batch" }>["items"],
    extra: Readonly<Record<string, LocalMethod>> | undefined,
    call: CallContext | undefined,
  ): Promise<string | undefined> {
    const responses = await this.#batch(items, extra, call);
    return responses.length ? JSON.stringify(responses) : undefined;
  }

  async #local(
    fn: Local,
    request: RpcRequest,
    call: CallContext | undefined,
  ): Promise<RpcResponse> {
    const id = request.id ?? null;
    const answer = (async () => {
      try {
        return success(id, await fn(paramsOf(request), this, call));
      } catch (e) {
        return failure(id, e);
      }
    })();
    this.#underWay.add(answer);
    try {
      return await answer;
    } finally {
      this.#underWay.delete(answer);
    }
  }

  /**
   * Resolves when every local call under way has its answer, or after
   * `ms`: the bridge, stopping, aborts its sends (their clients are told
   * which platform transaction goes on) and waits for those answers before
   * it closes the connections they go out on.
   */
  async settled(ms: number): Promise<void> {
    if (this.#underWay.size === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled([...this.#underWay]),
      new Promise((r) => timer = setTimeout(r, ms)),
    ]);
    clearTimeout(timer);
    // the transports write each answer once its promise resolves: let them
    await nextMacrotask();
  }

  async #batch(
    items: { request: RpcRequest | RpcError; id: RpcId }[],
    extra: Readonly<Record<string, LocalMethod>> | undefined,
    call: CallContext | undefined,
  ): Promise<RpcResponse[]> {
    const out: (RpcResponse | undefined)[] = new Array(items.length);
    const remote: { index: number; request: RpcRequest }[] = [];
    const pending: Promise<void>[] = [];
    items.forEach(({ request, id }, index) => {
      if (request instanceof RpcError) {
        out[index] = failure(id, request);
        return;
      }
      const local = localMethod(request.method, extra);
      if (local) {
        pending.push(
          this.#local(local, request, call).then((r) => {
            if (!isNotification(request)) out[index] = r;
          }),
        );
      } else if (isKeyMethod(request.method)) {
        if (!isNotification(request)) out[index] = failure(id, refuseKeyMethod(request.method));
      } else remote.push({ index, request });
    });
    if (remote.length) pending.push(this.#remoteBatch(remote, out));
    await Promise.all(pending);
    return out.filter((r): r is RpcResponse => r !== undefined);
  }

  /** Sends the pass-through part of a batch upstream as one batch. */
  async #remoteBatch(
    remote: { index: number; request: RpcRequest }[],
    out: (RpcResponse | undefined)[],
  ): Promise<void> {
    // Ids may repeat or be missing: give each upstream element a private id.
    const wire = remote.map(({ request }, i) => upstreamRequest(request, i));
    let answers: unknown;
    try {
      answers = await this.upstream.call(wire);
    } catch (e) {
      const err = upstreamFailure(e);
      for (const { index, request } of remote) {
        if (!isNotification(request)) out[index] = failure(request.id ?? null, err);
      }
      return;
    }
    const byId = new Map<number, unknown>();
    if (Array.isArray(answers)) {
      for (const a of answers) {
        if (a && typeof a === "object" && typeof (a as { id?: unknown }).id === "number") {
          byId.set((a as { id: number }).id, a);
        }
      }
    }
    for (let i = 0; i < remote.length; i++) {
      const { index, request } = remote[i];
      if (isNotification(request)) continue;
      const a = byId.get(i);
      const id = request.id ?? null;
      if (a) out[index] = answerFrom(a, id);
      else if (
        !Array.isArray(answers) && answers && typeof answers === "object" && "error" in answers
      ) {
        // The node refused the batch as a whole (no batch support): ask one by one.
        try {
          out[index] = answerFrom(await this.upstream.call(upstreamRequest(request, 0)), id);
        } catch (e) {
          out[index] = failure(id, upstreamFailure(e));
        }
      } else {
        out[index] = failure(
          id,
          new RpcError(RpcErrorCode.internal, "The upstream node gave no answer for this request."),
        );
      }
    }
  }
}
