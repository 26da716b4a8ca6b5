/**
 * A small JSON-RPC client over WebSocket (Deno's built-in `WebSocket`) and
 * over an IPC stream, for tests: requests by id, and notifications queued per
 * subscription id so a test waits for the next one as an event.
 *
 * @module
 */

import { IpcClient } from "./rpc.ts";

type Waiter = (value: unknown) => void;

/** Common part: routes answers by id and notifications by subscription. */
abstract class StreamRpc {
  #id = 1000;
  readonly #answers = new Map<unknown, Waiter>();
  readonly #queues = new Map<string, unknown[]>();
  readonly #waiting = new Map<string, Waiter>();
  /** Every notification message, in arrival order (raw parsed JSON). */
  readonly notifications: Record<string, unknown>[] = [];

  protected abstract sendText(text: string): void | Promise<void>;

  protected receive(text: string): void {
    const msg = JSON.parse(text);
    if (!Array.isArray(msg) && msg.method === "eth_subscription") {
      this.notifications.push(msg);
      const sub = msg.params.subscription as string;
      const w = this.#waiting.get(sub);
      if (w) {
        this.#waiting.delete(sub);
        w(msg.params.result);
      } else {
        const q = this.#queues.get(sub) ?? [];
        q.push(msg.params.result);
        this.#queues.set(sub, q);
      }
      return;
    }
    const key = Array.isArray(msg) ? "batch" : msg.id;
    const w = this.#answers.get(key);
    this.#answers.delete(key);
    w?.(msg);
  }

  /** Sends a raw message and waits for the answer with `key` (`"batch"` for a batch). */
  async raw(message: unknown, key: unknown): Promise<unknown> {
    const p = new Promise<unknown>((r) => this.#answers.set(key, r));
    await this.sendText(typeof message === "string" ? message : JSON.stringify(message));
    return await p;
  }

  /** Calls a method; resolves with the whole answer object. */
  async call(method: string, params: unknown[] = []): Promise<Record<string, unknown>> {
    const id = this.#id++;
    return await this.raw({ jsonrpc: "2.0", id, method, params }, id) as Record<string, unknown>;
  }

  /** Calls a method and returns its result, throwing on an error answer. */
  async request(method: string, params: unknown[] = []): Promise<unknown> {
    const a = await this.call(method, params);
    if (a.error) throw new Error(`${method}: ${JSON.stringify(a.error)}`);
    return a.result;
  }

  /** The next notification's result for subscription `id`. */
  next(id: string, timeoutMs = 15_000): Promise<unknown> {
    const q = this.#queues.get(id);
    if (q?.length) return Promise.resolve(q.shift());
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.#waiting.delete(id);
        reject(new Error(`no notification for ${id} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiting.set(id, (v) => {
        clearTimeout(t);
        resolve(v);
      });
    });
  }

  /** Notifications already queued (not yet taken by `next`) for `id`. */
  queued(id: string): unknown[] {
    return this.#queues.get(id) ?? [];
  }
}

/** JSON-RPC over a WebSocket. */
export class WsRpc extends StreamRpc {
  readonly socket: WebSocket;
  /** Resolves with the close event. */
  readonly closed: Promise<CloseEvent>;

  private constructor(socket: WebSocket) {
    super();
    this.socket = socket;
    socket.onmessage = (e) => this.receive(String(e.data));
    this.closed = new Promise((r) => socket.addEventListener("close", (e) => r(e)));
  }

  /** Connects and waits for the socket to open. */
  static async connect(url: string): Promise<WsRpc> {
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = (e) => reject(new Error(`WebSocket ${url}: ${(e as ErrorEvent).message}`));
    });
    return new WsRpc(socket);
  }

  protected sendText(text: string): void {
    this.socket.send(text);
  }

  /** Closes and waits for the close to finish. */
  async close(): Promise<void> {
    if (this.socket.readyState !== WebSocket.CLOSED) this.socket.close();
    await this.closed;
  }
}

/** JSON-RPC over an IPC socket (newline-delimited JSON answers). */
export class IpcRpc extends StreamRpc {
  readonly client: IpcClient;
  readonly #loop: Promise<void>;

  private constructor(client: IpcClient) {
    super();
    this.client = client;
    this.#loop = (async () => {
      try {
        for (;;) {
          const line = await client.readLine(3_600_000);
          if (line === undefined) return;
          this.receive(line);
        }
      } catch { /* closed */ }
    })();
  }

  /** Connects to a socket path. */
  static async connect(path: string): Promise<IpcRpc> {
    return new IpcRpc(await IpcClient.connect(path));
  }

  protected async sendText(text: string): Promise<void> {
    await this.client.write(text);
  }

  /** Closes the connection and waits for the read loop to end. */
  async close(): Promise<void> {
    this.client.close();
    await this.#loop;
  }
}
