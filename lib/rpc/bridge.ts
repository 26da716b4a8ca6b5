/**
 * Starts the bridge: checks the chain id against the node, builds the
 * dispatcher and serves it over IPC (default) or HTTP with WebSocket on the
 * same address; subscriptions live on the stream transports (WebSocket,
 * IPC). Returns the addresses a child is given and a `close()` that stops
 * everything. The command
 * (`lib/cli/rpc.ts`) adds credentials, the child and signals.
 *
 * @module
 */

import { toHex } from "../core/mod.ts";
import { Dispatcher, type Signer } from "./methods.ts";
import { type Upstream, UpstreamError } from "./upstream.ts";
import { SubscriptionHub } from "./subscriptions.ts";
import { NodeStream, WsUpstreamClient } from "./node_stream.ts";
import { IpcUpstreamClient } from "./ipc_upstream.ts";

/** Options of {@linkcode startBridge}. */
export interface BridgeOptions {
  /** The upstream node (already created). */
  upstream: Upstream;
  /** The chain id (already checked). */
  chainId: bigint;
  /** `web3_clientVersion`. */
  clientVersion: string;
  /** The custody signer. */
  signer?: Signer;
  /** `ipc` (default) or `http`. */
  transport: "ipc" | "http";
  /** IPC: the socket path; default a fresh private directory. */
  ipcPath?: string;
  /** HTTP: bind address; default 127.0.0.1. */
  host?: string;
  /** HTTP: port; default 0 (a free one). */
  port?: number;
  /** HTTP: the path; default a random per-run token. */
  httpPath?: string;
  /** HTTP: more accepted paths (e.g. the Brownie `/<API_KEY>` form). Never printed. */
  extraPaths?: readonly string[];
  /** HTTP: non-loopback Host names accepted. */
  allowedHosts?: readonly string[];
  /** HTTP: browser origins allowed. */
  allowOrigins?: readonly string[];
  /** Largest batch (default 1,000, geth's); a larger one is refused with -32600. */
  maxBatch?: number;
  /** Logs refused requests and dropped connections (`--verbose`). */
  log?: (line: string) => void;
  /** Gets every message and its answer (`--verbose`; see `DispatcherOptions.trace`). */
  trace?: (line: string) => void;
  /** Milliseconds between polls of the node for subscriptions; default 250. */
  subscriptionPollMs?: number;
}

/** A running bridge. */
export interface Bridge {
  /** The address for clients: a socket path, or `http://host:port/token`. */
  address: string;
  /**
   * The `ws://` address when the transport also accepts WebSocket upgrades
   * (shown in the banner and given to the child); absent otherwise.
   */
  wsAddress?: string;
  /** The subscriptions of every connection (for in-process use and tests). */
  hub: SubscriptionHub;
  /** Stops serving, aborts waits on custody, closes upstream connections. */
  close(): Promise<void>;
}

/**
 * Asks the node for its chain id.
 *
 * @example
 * ```ts
 * import { UpstreamClient } from "./upstream.ts";
 * await nodeChainId(new UpstreamClient("http://127.0.0.1:8545")); // 31337n
 * ```
 */
export async function nodeChainId(upstream: Upstream): Promise<bigint> {
  const r = await upstream.request("eth_chainId");
  if (typeof r !== "string" || !/^0x[0-9a-fA-F]+$/.test(r)) {
    throw new UpstreamError(
      `the node at ${upstream.shownUrl} answered eth_chainId with ${JSON.stringify(r)}`,
    );
  }
  return BigInt(r);
}

/** How long a stopping bridge waits for its aborted calls to answer their clients: 1 s. */
const STOP_ANSWER_MS = 1_000;

/** Starts serving. */
export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  const stop = new AbortController();
  const dispatcher = new Dispatcher({
    upstream: options.upstream,
    chainId: options.chainId,
    clientVersion: options.clientVersion,
    signer: options.signer,
    signal: stop.signal,
    maxBatch: options.maxBatch,
    trace: options.trace,
  });
  // A node with a push channel (WebSocket, IPC) serves subscriptions itself.
  const push = options.upstream instanceof WsUpstreamClient
    ? options.upstream.stream
    : options.upstream instanceof IpcUpstreamClient
    ? new NodeStream(options.upstream.url)
    : undefined;
  const hub = new SubscriptionHub(options.upstream, {
    push,
    pollIntervalMs: options.subscriptionPollMs,
    onError: (e) => options.log?.(`subscriptions: polling the node failed: ${e}`),
  });
  const finish = async (closeTransport: () => Promise<void>) => {
    stop.abort(new DOMException("the bridge is stopping", "AbortError"));
    // the aborted sends answer their clients (with the platform transaction that goes on) first
    await dispatcher.settled(STOP_ANSWER_MS);
    hub.close();
    await closeTransport();
    options.upstream.close();
  };
  // Only the chosen transport's modules are loaded (start-up time of `rpc -- cmd`).
  if (options.transport === "http") {
    const [{ createHttpHandler, serveHttp }, { createWebSocketHandler }] = await Promise.all([
      import("./http.ts"),
      import("./ws.ts"),
    ]);
    const host = options.host ?? "127.0.0.1";
    // default: a random per-run token of 128 bits
    const path = options.httpPath ?? `/${toHex(crypto.getRandomValues(new Uint8Array(16)))}`;
    const handler = createHttpHandler({
      dispatcher,
      paths: [path, ...(options.extraPaths ?? [])],
      allowedHosts: options.allowedHosts,
      allowOrigins: options.allowOrigins,
      onRefused: (why) => options.log?.(`refused an HTTP request: ${why}`),
      upgrade: createWebSocketHandler({
        dispatcher,
        hub,
        onDropped: (why) => options.log?.(`dropped a WebSocket connection: ${why}`),
      }),
    });
    const server = await serveHttp(handler, {
      hostname: host,
      port: options.port ?? 0,
      onShed: options.trace,
    });
    options.trace?.(server.engineDescription);
    const shownHost = host.includes(":") ? `[${host}]` : host;
    return {
      address: `http://${shownHost}:${server.port}${path}`,
      wsAddress: `ws://${shownHost}:${server.port}${path}`,
      hub,
      close: () => finish(() => server.close()),
    };
  }
  const { serveIpc } = await import("./ipc.ts");
  const ipc = await serveIpc({
    dispatcher,
    path: options.ipcPath,
    hub,
    onDropped: (why) => options.log?.(`dropped an IPC connection: ${why}`),
    onShed: options.trace,
  });
  return { address: ipc.path, hub, close: () => finish(() => ipc.close()) };
}
