/**
 * A node reached over its IPC socket (geth `geth.ipc`, anvil `--ipc`):
 * `--rpcUrl /path/to/node.ipc`. Raw JSON in both directions, framed with
 * the same streaming decoder as the bridge's own IPC server; the pool of
 * `upstream.ts` (one request in flight per connection, so answers need no id
 * matching, and the same timeout as over HTTP).
 *
 * @module
 */

import { readJsonFrames } from "./json_stream.ts";
import { NodeConnection } from "./node_connection.ts";
import { PooledUpstream, type Upstream, UpstreamClient, type UpstreamOptions } from "./upstream.ts";
import { WsUpstreamClient } from "./node_stream.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

class IpcConnection extends NodeConnection {
  /** Values the node sent with no request waiting (handed to the next request). */
  readonly #pending: string[] = [];

  constructor(conn: Deno.Conn, onClose: (c: NodeConnection) => void) {
    super(conn, onClose);
    this.readAll(() =>
      readJsonFrames(conn, (text) => {
        this.#pending.push(text);
        while (this.#pending.length) {
          const w = this.take();
          if (!w) break;
          w.resolve(this.#pending.shift()!);
        }
      })
    );
  }
}

/**
 * A JSON-RPC client for a node's IPC socket.
 *
 * @example
 * ```ts
 * const node = new IpcUpstreamClient("/tmp/anvil.ipc");
 * await node.request("eth_chainId");
 * node.close();
 * ```
 */
export class IpcUpstreamClient extends PooledUpstream<IpcConnection> {
  /** Creates a client for the socket at `path` (not a secret: shown as it is); nothing is opened yet. */
  constructor(path: string, options: UpstreamOptions = {}) {
    super(path, path, options, 32);
  }

  protected async open(onClose: (c: NodeConnection) => void): Promise<IpcConnection> {
    return new IpcConnection(await Deno.connect({ transport: "unix", path: this.url }), onClose);
  }

  /** Sends one message; a message that does not end in a newline gets one. */
  async send(body: string | Uint8Array): Promise<string> {
    const text = typeof body === "string" ? body : decoder.decode(body);
    const bytes = encoder.encode(text.endsWith("\n") ? text : text + "\n");
    return await this.exchange((c) => c.send(bytes));
  }
}

/**
 * The client for a `--rpcUrl`: an IPC socket for a path (`/…`, `./…`,
 * `file://…`, or a name ending in `.ipc`), a WebSocket for `ws://` and
 * `wss://`, else HTTP(S). Throws `TypeError` for anything else.
 */
export function connectUpstream(url: string): Upstream {
  if (/^wss?:\/\//i.test(url)) {
    new URL(url); // a TypeError for a malformed URL
    return new WsUpstreamClient(url);
  }
  if (url.startsWith("file://")) return new IpcUpstreamClient(new URL(url).pathname);
  if (
    url.startsWith("/") || url.startsWith("./") || url.startsWith("../") || url.endsWith(".ipc")
  ) {
    return new IpcUpstreamClient(url);
  }
  return new UpstreamClient(url);
}
