/**
 * The local JSON-RPC 2.0 bridge, as the CLI (`service rpc`) uses it: the
 * upstream node client, the custody signer, the bridge itself (protocol,
 * transports, method table) and the child supervisor. The errors the CLI maps
 * to exit codes live in `errors.ts`, which the CLI imports directly to keep
 * this barrel (and viem) off the `--help` path.
 *
 * @example
 * ```ts
 * import { connectUpstream, CustodySigner, startBridge } from "./mod.ts";
 * import type { CustodyOptions } from "./mod.ts";
 * declare const custody: CustodyOptions;
 * const signer = new CustodySigner(custody);
 * const upstream = connectUpstream("http://127.0.0.1:8545");
 * const bridge = await startBridge({
 *   upstream,
 *   chainId: 31337n,
 *   clientVersion: "service/0.1.0",
 *   signer,
 *   transport: "http",
 * });
 * ```
 *
 * @module
 */

export {
  ChildNotFoundError,
  ChildStartError,
  SocketInUseError,
  SocketPathError,
} from "./errors.ts";
export { connectUpstream } from "./ipc_upstream.ts";
export { Upstream } from "./upstream.ts";
export type { UpstreamOptions } from "./upstream.ts";
export { CustodySigner } from "./custody.ts";
export { DEFAULT_TX_TIMEOUT_MS } from "./platform_transaction.ts";
export type { CustodyOptions } from "./custody.ts";
export type { ChainTransaction } from "./send_proof.ts";
export type { PlatformTransactionOptions } from "./platform_transaction.ts";
export type { SendSlotsOptions } from "./send_slot.ts";
export type { Dispatcher, LocalMethod, Signer } from "./methods.ts";
export type { SubscriptionHub, SubscriptionSession } from "./subscriptions.ts";
export { KNOWN_CHAINS, knownChain } from "./chains.ts";
export type { KnownChain } from "./chains.ts";
export { nodeChainId, startBridge } from "./bridge.ts";
export type { Bridge, BridgeOptions } from "./bridge.ts";
export { childEnv, runChild, substituteAddress } from "./supervisor.ts";
export type { ChildOptions } from "./supervisor.ts";
export { addressFlags, resumeHint } from "./resume_hint.ts";
// Types the exports above name, re-exported so that this barrel documents them.
export type { CallContext } from "./methods.ts";
export type { SendClient } from "./send_book.ts";
export type { BaseError } from "../core/mod.ts";
export type {
  AnswerSchema,
  ApiResponse,
  Page,
  PlatformClient,
  QueryValue,
  RequestOptions,
} from "../platform/mod.ts";
