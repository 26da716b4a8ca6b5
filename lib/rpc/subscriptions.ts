/**
 * `eth_subscribe` / `eth_unsubscribe` on the stream transports (WebSocket and
 * IPC): `newHeads`, `logs` (address/topics filter, geth's matching rules)
 * and `newPendingTransactions`. A {@linkcode SubscriptionHub} (one per bridge)
 * passes each subscription through to the node when it offers a push channel
 * (a WebSocket or IPC node: one `NodeStream`), else feeds every
 * subscription from one {@linkcode ChainPoller} on the node; each
 * connection has a {@linkcode SubscriptionSession} that owns its
 * subscriptions and pushes notifications shaped as geth and anvil push them:
 * `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":ID,"result":…}}`.
 * Closing the session (the connection ended) removes every subscription it
 * held: the hub keeps nothing for a closed connection.
 *
 * @module
 */

import { messageOf, toHex } from "../core/mod.ts";
import { type ChainListener, ChainPoller, type RpcBlock, type RpcLog } from "./chain_poller.ts";
import type { LocalMethod } from "./methods.ts";
import { ADDRESS, RpcError, RpcErrorCode } from "./protocol.ts";
import type { Upstream } from "./upstream.ts";
import { NodeRpcError, type NodeStream } from "./node_stream.ts";

/** The subscription kinds served. */
export const SUBSCRIPTION_KINDS: readonly string[] = ["newHeads", "logs", "newPendingTransactions"];

/** A `logs` filter after validation: lower-case addresses and topic alternatives. */
export interface LogFilter {
  /** Matching addresses; empty matches any. */
  addresses: string[];
  /** Per position: the accepted topics; `null` matches any. */
  topics: (string[] | null)[];
}

const HASH = /^0x[0-9a-fA-F]{64}$/;

function invalid(message: string): RpcError {
  return new RpcError(RpcErrorCode.invalidParams, `eth_subscribe: ${message}`);
}

/** Validates the filter object of a `logs` subscription. */
export function parseLogFilter(value: unknown): LogFilter {
  if (value === undefined || value === null) return { addresses: [], topics: [] };
  if (typeof value !== "object" || Array.isArray(value)) {
    throw invalid("the logs filter must be an object {address?, topics?}.");
  }
  const v = value as { address?: unknown; topics?: unknown };
  const list = v.address === undefined || v.address === null
    ? []
    : Array.isArray(v.address)
    ? v.address
    : [v.address];
  for (const a of list) {
    if (typeof a !== "string" || !ADDRESS.test(a)) {
      throw invalid("address must be an address or a list of addresses (0x + 40 hex digits).");
    }
  }
  const topics: (string[] | null)[] = [];
  if (v.topics !== undefined && v.topics !== null) {
    if (!Array.isArray(v.topics) || v.topics.length > 4) {
      throw invalid("topics must be a list of at most 4 positions.");
    }
    for (const t of v.topics) {
      const alts = t === null ? null : Array.isArray(t) ? t : [t];
      if (alts) {
        for (const h of alts) {
          if (typeof h !== "string" || !HASH.test(h)) {
            throw invalid("each topic must be null, a 32-byte hash or a list of hashes.");
          }
        }
      }
      topics.push(alts && alts.length ? alts.map((h) => (h as string).toLowerCase()) : null);
    }
  }
  return { addresses: (list as string[]).map((a) => a.toLowerCase()), topics };
}

/** Whether `log` matches `filter` (geth's rules: positions AND, alternatives OR). */
export function matchesLog(filter: LogFilter, log: RpcLog): boolean {
  if (filter.addresses.length && !filter.addresses.includes(String(log.address).toLowerCase())) {
    return false;
  }
  if (filter.topics.length > log.topics.length) return false;
  for (let i = 0; i < filter.topics.length; i++) {
    const alts = filter.topics[i];
    if (alts && !alts.includes(String(log.topics[i]).toLowerCase())) return false;
  }
  return true;
}

/**
 * The notification texts of the blocks and logs being fanned out, by result
 * and subscription id: built once per (result, id), not once per subscriber.
 * With {@linkcode SharedIds} most subscribers of one kind hold the same id,
 * so one block is one string sent to every connection (a thousand
 * subscribers allocate one notification, not a thousand).
 */
const notifications = new WeakMap<object, Map<string, string>>();

/** Where the result goes in a notification: `PREFIX + id + MIDDLE + result + SUFFIX`. */
const PREFIX = '{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"';
const MIDDLE = '","result":';
const SUFFIX = "}}";

function notificationText(id: string, result: unknown): string {
  if (result === null || typeof result !== "object") {
    return PREFIX + id + MIDDLE + JSON.stringify(result) + SUFFIX;
  }
  let byId = notifications.get(result);
  if (byId === undefined) {
    byId = new Map();
    notifications.set(result, byId);
  }
  let text = byId.get(id);
  if (text === undefined) {
    // The result's JSON, encoded once for every id (kept under the empty id).
    let json = byId.get("");
    if (json === undefined) {
      json = JSON.stringify(result);
      byId.set("", json);
    }
    text = PREFIX + id + MIDDLE + json + SUFFIX;
    byId.set(id, text);
  }
  return text;
}

/** A new subscription id: 16 random bytes as hex, as geth makes them. */
function newId(): string {
  return "0x" + toHex(crypto.getRandomValues(new Uint8Array(16)));
}

/**
 * Subscription ids shared by the connections of one hub: the n-th
 * subscription of every connection gets the same random id (for n below
 * {@linkcode SharedIds.size}; later ones get fresh ids). A subscription id
 * only has to be unique within its connection: a subscription belongs to the
 * connection that made it (`eth_unsubscribe` acts on the caller's connection
 * only, here as in geth), and the viem, ethers and web3.js clients tested end
 * to end (`tests/e2e/rpc_ws_clients_test.ts`) match notifications on their
 * own socket. Sharing ids lets identical notifications share one text.
 */
export class SharedIds {
  /** How many ids are shared; a connection's later subscriptions get fresh ids. */
  static readonly size = 64;
  readonly #ids: string[] = [];

  /** The id of a connection's `n`-th subscription (0-based). */
  at(n: number): string {
    if (n >= SharedIds.size) return newId();
    while (this.#ids.length <= n) this.#ids.push(newId()); // 128 random bits: no repeat
    return this.#ids[n];
  }
}

/** Options of {@linkcode SubscriptionHub}. */
export interface SubscriptionHubOptions {
  /** Milliseconds between polls of the node; default 250. */
  pollIntervalMs?: number;
  /** Called when a poll of the node fails (for `--verbose`). */
  onError?(error: unknown): void;
  /** The node's push channel: subscriptions are passed through it instead of polling. */
  push?: NodeStream;
}

/** Every subscription of a bridge, fed from one poller on the node. */
export class SubscriptionHub {
  readonly #poller: ChainPoller;
  readonly #push: NodeStream | undefined;
  readonly #sessions = new Set<SubscriptionSession>();
  /** What to do when the node drops a passed-through subscription, by the node's id. */
  readonly #lost = new Map<string, () => void>();
  readonly #ids = new SharedIds();

  /** Creates a hub polling `upstream` (or passing through to `options.push`). */
  constructor(upstream: Upstream, options: SubscriptionHubOptions = {}) {
    this.#poller = new ChainPoller(upstream, {
      intervalMs: options.pollIntervalMs,
      onError: options.onError,
    });
    this.#push = options.push;
    if (this.#push) {
      this.#push.onLost = (nodeId) => {
        const end = this.#lost.get(nodeId);
        this.#lost.delete(nodeId);
        end?.();
      };
    }
  }

  /** Subscriptions passed through to the node (a test seam). */
  get nodeSubscriptions(): number {
    return this.#push?.subscriptions ?? 0;
  }

  /** Open sessions (a test seam: 0 once every connection closed). */
  get sessions(): number {
    return this.#sessions.size;
  }

  /** Live subscriptions over all sessions (a test seam). */
  get subscriptions(): number {
    let n = 0;
    for (const s of this.#sessions) n += s.size;
    return n;
  }

  /** Listeners registered on the poller (a test seam: 0 when nothing is subscribed). */
  get pollerListeners(): number {
    return this.#poller.listeners;
  }

  /**
   * A session for one connection; `push` sends one notification text to
   * it. Close the session when the connection ends.
   */
  session(push: (text: string) => void): SubscriptionSession {
    const s = new SubscriptionSession(
      this.#poller,
      push,
      () => this.#sessions.delete(s),
      this.#ids,
      this.#push && { stream: this.#push, lost: this.#lost },
    );
    this.#sessions.add(s);
    return s;
  }

  /** Ends every session and stops polling. */
  close(): void {
    for (const s of [...this.#sessions]) s.close();
    this.#poller.close();
    this.#push?.close();
  }
}

/** The subscriptions of one connection. */
export class SubscriptionSession {
  readonly #poller: ChainPoller;
  readonly #push: (text: string) => void;
  readonly #onClose: () => void;
  readonly #subs = new Map<string, () => void>();
  readonly #node: { stream: NodeStream; lost: Map<string, () => void> } | undefined;
  readonly #ids: SharedIds;
  /** Subscriptions started on this connection so far (the next one's index in `#ids`). */
  #started = 0;
  #closed = false;

  /** Use {@linkcode SubscriptionHub.session}. */
  constructor(
    poller: ChainPoller,
    push: (text: string) => void,
    onClose: () => void,
    ids: SharedIds,
    node?: { stream: NodeStream; lost: Map<string, () => void> },
  ) {
    this.#poller = poller;
    this.#push = push;
    this.#onClose = onClose;
    this.#node = node;
    this.#ids = ids;
  }

  /** How many subscriptions are live. */
  get size(): number {
    return this.#subs.size;
  }

  /** `eth_subscribe` and `eth_unsubscribe` bound to this session, for the method table. */
  readonly methods: Readonly<Record<string, LocalMethod>> = {
    eth_subscribe: (params) => this.subscribe(params),
    eth_unsubscribe: (params) => this.unsubscribe(params[0]),
  };

  #notify(id: string, result: unknown): void {
    if (this.#closed || !this.#subs.has(id)) return;
    this.#push(notificationText(id, result));
  }

  /** Starts a subscription; resolves with its id. */
  async subscribe(params: unknown[]): Promise<string> {
    if (this.#closed) throw new RpcError(RpcErrorCode.internal, "The connection is closing.");
    const [kind, option] = params;
    const id = this.#ids.at(this.#started++);
    if (this.#node) return await this.#passThrough(id, params);
    let listener: ChainListener;
    if (kind === "newHeads") {
      listener = { onBlock: (block) => this.#notify(id, block) };
    } else if (kind === "logs") {
      const filter = parseLogFilter(option);
      const each = (logs: RpcLog[] | undefined, removed: boolean) => {
        if (!logs) return;
        for (const log of logs) {
          if (matchesLog(filter, log)) this.#notify(id, removed ? { ...log, removed: true } : log);
        }
      };
      listener = {
        wantsLogs: true,
        onBlock: (_b: RpcBlock, logs) => each(logs, false),
        // Logs of dropped blocks come again with removed: true, newest block first.
        onRemoved: (_b: RpcBlock, logs) => each(logs && [...logs].reverse(), true),
      };
    } else if (kind === "newPendingTransactions") {
      if (option !== undefined && option !== false) {
        throw invalid(
          "newPendingTransactions with full transactions is not supported: omit the second parameter and fetch each hash.",
        );
      }
      listener = {
        wantsPending: true,
        onPending: (hashes) => {
          for (const h of hashes) this.#notify(id, h);
        },
      };
    } else {
      throw invalid(
        `unknown subscription ${JSON.stringify(kind)}: use one of ${
          SUBSCRIPTION_KINDS.join(", ")
        }.`,
      );
    }
    this.#subs.set(id, () => {});
    let off: () => void;
    try {
      off = await this.#poller.listen(listener);
    } catch (e) {
      this.#subs.delete(id);
      throw new RpcError(
        RpcErrorCode.server,
        `eth_subscribe: the node could not be followed (${messageOf(e)}).`,
      );
    }
    if (this.#closed || !this.#subs.has(id)) off();
    else this.#subs.set(id, off);
    return id;
  }

  /** Subscribes on the node's own push channel; its notifications are relayed under `id`. */
  async #passThrough(id: string, params: unknown[]): Promise<string> {
    const { stream, lost } = this.#node!;
    this.#subs.set(id, () => {});
    let nodeId: string;
    try {
      nodeId = await stream.subscribe(params, (result) => this.#notify(id, result));
    } catch (e) {
      this.#subs.delete(id);
      if (e instanceof NodeRpcError) {
        throw new RpcError(e.error.code, e.error.message, e.error.data);
      }
      throw new RpcError(
        RpcErrorCode.server,
        `eth_subscribe: the node could not be reached (${messageOf(e)}).`,
      );
    }
    const off = () => {
      lost.delete(nodeId);
      stream.unsubscribe(nodeId);
    };
    if (this.#closed || !this.#subs.has(id)) {
      off();
      return id;
    }
    this.#subs.set(id, off);
    // The node dropped its connection: the subscription is over.
    lost.set(nodeId, () => this.#subs.delete(id));
    return id;
  }

  /** Ends a subscription; `false` when this connection holds no such id. */
  unsubscribe(id: unknown): boolean {
    if (typeof id !== "string") return false;
    const off = this.#subs.get(id);
    if (!off) return false;
    this.#subs.delete(id);
    off();
    return true;
  }

  /** Ends every subscription of this connection. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const off of this.#subs.values()) off();
    this.#subs.clear();
    this.#onClose();
  }
}
