/**
 * The local JSON-RPC 2.0 bridge: protocol, transports (IPC, HTTP), the method
 * table, the custody signer, the upstream node client and the child
 * supervisor.
 *
 * @module
 */

export {
  classify,
  failure,
  isNotification,
  paramsOf,
  parseMessage,
  RpcError,
  RpcErrorCode,
  success,
  validateRequest,
} from "./protocol.ts";
export type { ParsedMessage, RpcErrorObject, RpcId, RpcRequest, RpcResponse } from "./protocol.ts";
export { DEFAULT_MAX_FRAME_BYTES, FramingError, JsonStreamDecoder } from "./json_stream.ts";
export { redactUrl, Upstream, UpstreamClient, UpstreamError } from "./upstream.ts";
export { connectUpstream, IpcUpstreamClient } from "./ipc_upstream.ts";
export type { UpstreamOptions } from "./upstream.ts";
export { Dispatcher, isKeyMethod, LOCAL_METHODS } from "./methods.ts";
export type { LocalMethod } from "./methods.ts";
export type { DispatcherOptions, Signer } from "./methods.ts";
export { createHttpHandler, DEFAULT_MAX_BODY_BYTES, isLoopbackHost, serveHttp } from "./http.ts";
export type { HttpHandlerOptions, HttpServer } from "./http.ts";
export { serveIpc, SocketInUseError } from "./ipc.ts";
export type { IpcOptions, IpcServer } from "./ipc.ts";
export {
  childEnv,
  ChildNotFoundError,
  ChildStartError,
  exitCodeOf,
  FORWARDED_SIGNALS,
  runChild,
  SECRET_ENV_VARS,
  substituteAddress,
} from "./supervisor.ts";
export type { ChildOptions } from "./supervisor.ts";
export {
  CustodySigner,
  DEFAULT_TX_TIMEOUT_MS,
  pollDelay,
  signatureHex,
  toRpcError,
} from "./custody.ts";
export type { CustodyOptions } from "./custody.ts";
export { KNOWN_CHAINS, knownChain } from "./chains.ts";
export type { KnownChain } from "./chains.ts";
export { formatUnits, parseQuantity } from "./units.ts";
export { nodeChainId, randomToken, startBridge } from "./bridge.ts";
export type { Bridge, BridgeOptions } from "./bridge.ts";
export { toTransactionRequest } from "./transaction_request.ts";
export { UpstreamBatcher } from "./upstream_batcher.ts";
export type { BatcherOptions } from "./upstream_batcher.ts";
