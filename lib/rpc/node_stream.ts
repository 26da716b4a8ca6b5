/**
 * One multiplexed stream connection to the node, WebSocket (`--rpcUrl
 * ws://…` / `wss://…`) or IPC: requests get private ids so any number can be
 * in flight (answers are matched back and carry the caller's ids again), and
 * `eth_subscription` notifications are routed by the node's subscription
 * id. {@linkcode WsUpstreamClient} reads through it; the `SubscriptionHub`
 * passes `eth_subscribe` through it when the node offers a push channel.
 *
 * @module
 */

import { closeQuietly } from "../core/connection_guard.ts";
import { readJsonFrames } from "./json_stream.ts";
import { UpstreamError, writeFull } from "./node_connection.ts";
import { redactUrl, Upstream } from "./upstream.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

type Pending = Omit<PromiseWithResolvers<unknown>, "promise">;

/** Opens the byte or message channel under a {@linkcode NodeStream}. */
interface Channel {
  send(text: string): void;
  close(): void;
}

/** A stream connection to a node, opened lazily and again after it dropped. */
export class NodeStream {
  /** The node address, safe to show. */
  readonly shownUrl: string;
  readonly #url: string;
  #channel: Promise<Channel> | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  readonly #subscribers = new Map<string, (result: unknown) => void>();
  /** Milliseconds a request may wait for its answer; default 120000 (as over HTTP). */
  timeoutMs = 120_000;
  /** Called for each subscription the node dropped with the connection. */
  onLost: ((nodeId: string) => void) | undefined;

  /** A stream to `url`: `ws://`, `wss://`, or an IPC socket path. */
  constructor(url: string) {
    this.#url = url;
    this.shownUrl = /^wss?:/i.test(url) ? redactUrl(url) : url; // ws: and wss: URLs have an origin
  }

  #open(): Promise<Channel> {
    this.#channel ??= (/^wss?:/i.test(this.#url) ? this.#openWs() : this.#openIpc()).catch((e) => {
      this.#channel = undefined;
      throw new UpstreamError(`cannot connect to the node at ${this.shownUrl}: ${e}`, { cause: e });
    });
    return this.#channel;
  }

  #openWs(): Promise<Channel> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.#url);
      ws.onopen = () => resolve({ send: (t) => ws.send(t), close: () => ws.close() });
      ws.onerror = () => reject(new Error("WebSocket error"));
      ws.onmessage = (e) => this.#receive(String(e.data));
      ws.onclose = () => this.#dropped();
    });
  }

  async #openIpc(): Promise<Channel> {
    const conn = await Deno.connect({ transport: "unix", path: this.#url });
    readJsonFrames(conn, (text) => this.#receive(text)).catch(() => {}).then(() => this.#dropped());
    let writes = Promise.resolve();
    return {
      send: (t) => {
        const bytes = encoder.encode(t + "\n");
        writes = writes.then(() => writeFull(conn, bytes)).catch(() => {});
      },
      close: () => closeQuietly(conn),
    };
  }

  #dropped(): void {
    this.#channel = undefined;
    const error = new UpstreamError(`the node at ${this.shownUrl} closed the connection`);
    for (const p of this.#pending.values()) p.reject(error);
    this.#pending.clear();
    const lost = [...this.#subscribers.keys()];
    this.#subscribers.clear();
    for (const id of lost) this.onLost?.(id);
  }

  #receive(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    const m = msg as { method?: string; params?: { subscription?: string; result?: unknown } };
    if (m?.method === "eth_subscription" && m.params?.subscription !== undefined) {
      this.#subscribers.get(String(m.params.subscription))?.(m.params.result);
      return;
    }
    // An answer (a batch's: its first element with an id) resolves the call that sent that id.
    const first = Array.isArray(msg) ? msg.find((x) => typeof x?.id === "number") : msg;
    const id = (first as { id?: unknown } | null)?.id;
    const p = typeof id === "number" ? this.#pending.get(id) : undefined;
    if (p) {
      this.#pending.delete(id as number);
      p.resolve(msg);
    }
  }

  /**
   * Sends a message (single or batch) with private ids and resolves with the
   * answer, the caller's ids restored; `undefined` for notifications only.
   */
  async call(message: unknown): Promise<unknown> {
    const channel = await this.#open();
    const items = Array.isArray(message) ? message : [message];
    const originals = new Map<number, unknown>();
    const wire = items.map((item) => {
      if (!item || typeof item !== "object" || !("id" in item)) return item;
      const id = this.#nextId++;
      originals.set(id, (item as { id: unknown }).id);
      return { ...item, id };
    });
    if (originals.size === 0) {
      channel.send(JSON.stringify(Array.isArray(message) ? wire : wire[0]));
      return undefined;
    }
    const firstId = originals.keys().next().value as number;
    const answer = Promise.withResolvers<unknown>();
    this.#pending.set(firstId, answer);
    const timer = setTimeout(() => {
      this.#pending.delete(firstId);
      answer.reject(new UpstreamError(`no answer from the node within ${this.timeoutMs} ms`));
    }, this.timeoutMs);
    channel.send(JSON.stringify(Array.isArray(message) ? wire : wire[0]));
    const got = await answer.promise.finally(() => clearTimeout(timer));
    const restore = (a: unknown) => {
      if (a && typeof a === "object" && typeof (a as { id?: unknown }).id === "number") {
        const id = (a as { id: number }).id;
        if (originals.has(id)) return { ...a, id: originals.get(id) };
      }
      return a;
    };
    return Array.isArray(got) ? got.map(restore) : restore(got);
  }

  /**
   * Subscribes on the node; `onResult` gets each notification's result.
   * Resolves with the node's subscription id, or throws the node's error.
   */
  async subscribe(params: unknown[], onResult: (result: unknown) => void): Promise<string> {
    const answer = await this.call({ jsonrpc: "2.0", id: 0, method: "eth_subscribe", params }) as {
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
    };
    if (answer?.error) throw new NodeRpcError(answer.error);
    const id = String(answer?.result);
    this.#subscribers.set(id, onResult);
    return id;
  }

  /** Ends a node subscription (best effort). */
  unsubscribe(nodeId: string): void {
    if (!this.#subscribers.delete(nodeId)) return;
    this.call({ jsonrpc: "2.0", id: 0, method: "eth_unsubscribe", params: [nodeId] }).catch(
      () => {},
    );
  }

  /** Node subscriptions live (a test seam). */
  get subscriptions(): number {
    return this.#subscribers.size;
  }

  /** Closes the connection. */
  close(): void {
    const c = this.#channel;
    this.#channel = undefined;
    c?.then((ch) => ch.close(), () => {});
  }
}

/** The node refused a request with a JSON-RPC error (passed on as is). */
export class NodeRpcError extends UpstreamError {
  /** The node's error object. */
  readonly error: { code: number; message: string; data?: unknown };
  /** Wraps the node's error object. */
  constructor(error: { code: number; message: string; data?: unknown }) {
    super(`the node answered with error ${error.code}: ${error.message}`);
    this.name = "NodeRpcError";
    this.error = error;
  }
}

/**
 * A JSON-RPC client for a node's WebSocket (`--rpcUrl ws://…`): reads go
 * over one multiplexed connection, and the same node serves subscriptions
 * ({@linkcode NodeStream}).
 */
export class WsUpstreamClient extends Upstream {
  /** The node URL, as given. */
  readonly url: string;
  /** The URL safe to show. */
  readonly shownUrl: string;
  /** The stream the reads use. */
  readonly stream: NodeStream;

  /** Creates a client for `url`; nothing is opened yet. */
  constructor(url: string) {
    super();
    this.url = url;
    this.stream = new NodeStream(url);
    this.shownUrl = this.stream.shownUrl;
  }

  /** Sends one message text; resolves with the node's answer text. */
  async send(body: string | Uint8Array): Promise<string> {
    const text = typeof body === "string" ? body : decoder.decode(body);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new UpstreamError("the request is not JSON");
    }
    const answer = await this.stream.call(value);
    return answer === undefined ? "" : JSON.stringify(answer);
  }

  /** Closes the connection. */
  close(): void {
    this.stream.close();
  }
}
