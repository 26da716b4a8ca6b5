/**
 * The IPC transport: a Unix domain socket speaking raw JSON (one value per
 * request, each answer followed by `\n`), as geth and anvil do and as cast,
 * forge, viem `ipc()`, ethers `IpcSocketProvider` and web3.py expect. By
 * default the socket lives in a fresh private directory (0700) and is itself
 * 0600. A stale socket file left by a crash is removed; a live one is never
 * taken over. Garbage on a connection is answered with -32700 and that
 * connection is dropped; the server keeps serving the others.
 *
 * The socket is a stream, so subscriptions push their notifications on it
 * (`eth_subscribe`, as geth and anvil do). Backpressure: while a
 * connection's unsent answers exceed a bound (or too many of its requests
 * are in flight), the server stops reading from it, so a client that sends
 * without reading fills its own socket buffer, not the bridge's memory; a
 * subscriber that does not read its notifications is dropped.
 *
 * Connections have the bounds of every listener (`../core/connection_guard.ts`):
 * a cap (half the descriptor limit, 16 to 1,024) where the oldest idle
 * connection is shed for a new one (one with subscriptions or a request in
 * flight never is), a first request within 60 s, and an accept loop that
 * survives running out of descriptors by shedding idle connections and
 * backing off. A served connection that stays idle is kept (IPC clients such
 * as ethers hold one for the life of their process) until the cap needs it.
 *
 * @module
 */

import { makeOwnedTempDir, removeStaleOwnedDirs } from "../core/owned_temp_dir.ts";
import {
  acceptLoop,
  closeQuietly,
  ConnectionGuard,
  type Guarded,
} from "../core/connection_guard.ts";
import { SocketInUseError, SocketPathError } from "./errors.ts";
import { FramingError, JsonStreamDecoder } from "./json_stream.ts";
import type { Dispatcher } from "./methods.ts";
import { errorText, exactIds, RpcErrorCode } from "./protocol.ts";
import type { SubscriptionHub } from "./subscriptions.ts";
import { writeFull } from "./node_connection.ts";

/** Default bound of unsent answer bytes per connection before reading pauses: 4 MiB. */
export const DEFAULT_IPC_MAX_UNSENT_BYTES = 4 * 1024 * 1024;

/** Time for a new IPC connection to send its first complete request: 60 s. */
export const IPC_FIRST_REQUEST_TIMEOUT_MS = 60_000;

/** Bound of requests in flight per connection before reading pauses. */
export const IPC_MAX_INFLIGHT = 1024;

/** Options of {@linkcode serveIpc}. */
export interface IpcOptions {
  /** Answers each decoded message. */
  dispatcher: Dispatcher;
  /** The socket path; default `<fresh private dir>/rpc.ipc`. */
  path?: string;
  /** Called for each dropped connection (for `--verbose` logs). */
  onDropped?: (reason: string) => void;
  /** Told each time idle connections are shed or timed out (for `--verbose` logs). */
  onShed?: (why: string) => void;
  /** Subscriptions; without it `eth_subscribe` answers -32601. */
  hub?: SubscriptionHub;
  /** Unsent bytes above which reading pauses (and a notification drops the connection). */
  maxUnsentBytes?: number;
  /**
   * A test seam: called each time reading from a connection pauses, with
   * its unsent bytes and requests in flight at that moment.
   */
  onPause?: (state: { unsentBytes: number; inflight: number }) => void;
}

/** A running IPC transport. */
export interface IpcServer {
  /** The socket path. */
  path: string;
  /** Stops accepting, closes connections, removes the socket (and the private directory). */
  close(): Promise<void>;
}

const encoder = new TextEncoder();

/** The last text framed, and its bytes: see {@linkcode lineBytes}. */
let lastText: string | undefined;
let lastBytes = new Uint8Array();

/**
 * `text` as one IPC line (its own raw newlines removed: JSON strings never hold them, only
 * whitespace goes; a newline at the end). The last short text's bytes are kept, so a
 * subscription notification pushed to many connections (one shared text per block,
 * `subscriptions.ts`) is encoded once, not once per subscriber. The bytes are only read.
 */
function lineBytes(text: string): Uint8Array {
  if (text === lastText) return lastBytes;
  const line = text.includes("\n") || text.includes("\r") ? text.replace(/[\r\n]/g, "") : text;
  const bytes = encoder.encode(line + "\n");
  if (text.length <= 64 * 1024) {
    lastText = text;
    lastBytes = bytes;
  }
  return bytes;
}
const decoder = new TextDecoder();

async function removeStale(path: string): Promise<void> {
  const info = await Deno.lstat(path).catch(() => undefined);
  if (!info) return; // nothing there
  if (!info.isSocket) {
    throw new SocketPathError(
      path,
      "a file that is not a socket is there. Choose another --ipcPath",
    );
  }
  const live = await Deno.connect({ transport: "unix", path }).catch(() => undefined);
  if (live) {
    live.close();
    throw new SocketInUseError(path);
  }
  await Deno.remove(path); // stale: nobody answers
}

/** The socket directory's name: `service-rpc-<pid>-<random>` in the temporary directory. */
const SOCKET_DIR_PREFIX = "service-rpc-";

/**
 * Serves JSON-RPC on a Unix socket.
 *
 * @example
 * ```ts
 * import type { Dispatcher } from "./methods.ts";
 * declare const dispatcher: Dispatcher;
 * const ipc = await serveIpc({ dispatcher });
 * console.log(ipc.path);
 * await ipc.close();
 * ```
 */
export async function serveIpc(options: IpcOptions): Promise<IpcServer> {
  let dir: string | undefined;
  let path = options.path;
  if (path === undefined) {
    dir = await makeOwnedTempDir(SOCKET_DIR_PREFIX);
    // the directories of bridges that ended without cleaning up (SIGKILL): removed here
    await removeStaleOwnedDirs(SOCKET_DIR_PREFIX, dir);
    path = `${dir}/rpc.ipc`;
  } else {
    await removeStale(path);
  }
  let listener: Deno.UnixListener;
  try {
    listener = Deno.listen({ transport: "unix", path });
  } catch (e) {
    const where = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) || "/" : ".";
    const why = e instanceof Deno.errors.NotFound
      ? `its directory ${where} does not exist`
      : e instanceof Deno.errors.PermissionDenied
      ? `permission denied in ${where}`
      : (e as Error)?.message ?? String(e);
    throw new SocketPathError(path, `${why}. Choose another --ipcPath`, { cause: e });
  }
  await Deno.chmod(path, 0o600);
  const guard = new ConnectionGuard({
    headerTimeoutMs: IPC_FIRST_REQUEST_TIMEOUT_MS,
    idleTimeoutMs: Infinity,
    onShed: options.onShed,
  });
  let closed = false;

  const maxUnsent = options.maxUnsentBytes ?? DEFAULT_IPC_MAX_UNSENT_BYTES;
  const serveConn = async (conn: Deno.Conn, g: Guarded) => {
    const frames = new JsonStreamDecoder();
    let writes: Promise<void> = Promise.resolve();
    let alive = true;
    let unsent = 0;
    const inflight = new Set<Promise<void>>();
    /** Resolves the read loop's wait once the connection may be read again. */
    let resume: (() => void) | undefined;
    const wake = () => {
      if (resume && unsent <= maxUnsent && inflight.size < IPC_MAX_INFLIGHT) {
        const r = resume;
        resume = undefined;
        r();
      }
    };
    const write = (text: string) => {
      const bytes = lineBytes(text);
      unsent += bytes.length;
      writes = writes.then(() => alive ? writeFull(conn, bytes) : undefined).catch(() => {
        alive = false;
      }).finally(() => {
        unsent -= bytes.length;
        wake();
      });
      return writes;
    };
    const close = () => {
      alive = false;
      session?.close();
      closeQuietly(conn);
      resume?.();
    };
    const push = (text: string) => {
      if (!alive) return;
      if (unsent > maxUnsent) {
        options.onDropped?.(
          `client too slow: over ${maxUnsent} bytes of answers and notifications unread`,
        );
        close();
        return;
      }
      write(text);
    };
    const session = options.hub?.session(push);
    const extra = session?.methods;
    // Per request until its answer is written: aborted when the peer closes its end first
    // (or the answer cannot be written), so a send it asked for may be joined by a repeat
    // (send_book.ts). A peer that half-closes and still reads counts as gone too.
    const unanswered = new Set<AbortController>();
    const drop = async (reason: string) => {
      options.onDropped?.(reason);
      await write(errorText(RpcErrorCode.parseError, `Parse error: ${reason}.`));
      close();
    };
    const buf = new Uint8Array(256 * 1024);
    try {
      while (alive) {
        if (unsent > maxUnsent || inflight.size >= IPC_MAX_INFLIGHT) {
          options.onPause?.({ unsentBytes: unsent, inflight: inflight.size });
          await new Promise<void>((r) => {
            resume = r;
            wake();
          });
          continue;
        }
        const n = await conn.read(buf);
        if (n === null) break;
        let found: Uint8Array[];
        try {
          found = frames.push(buf.subarray(0, n));
        } catch (e) {
          await drop(e instanceof FramingError ? e.message : "unreadable input");
          return;
        }
        for (const frame of found) {
          const text = decoder.decode(frame);
          let value: unknown;
          try {
            value = exactIds(JSON.parse(text), text);
          } catch {
            await drop("a message is not valid JSON");
            return;
          }
          const gone = new AbortController();
          unanswered.add(gone);
          g.inflight++;
          g.lastActive = Date.now();
          const p: Promise<void> = options.dispatcher.handleValue(value, text, extra, {
            clientGone: gone.signal,
          }).then(async (answer) => {
            if (answer !== undefined && alive) await write(answer);
            if (!alive) gone.abort(); // never written: never received
          }).finally(() => {
            g.inflight--;
            g.served = true;
            g.lastActive = Date.now();
            g.pinned = (session?.size ?? 0) > 0;
            unanswered.delete(gone);
            inflight.delete(p);
            wake();
          });
          inflight.add(p);
        }
      }
    } catch {
      // connection reset: nothing to answer
    } finally {
      for (const gone of unanswered) gone.abort();
      // The peer may have half-closed after its last request: answer what is in flight.
      while (alive && inflight.size) await Promise.all([...inflight]);
      await writes;
      close();
      guard.forget(g);
    }
  };

  guard.start();
  const loop = acceptLoop(listener, guard, (conn, g) => {
    void serveConn(conn, g);
  });

  return {
    path,
    async close() {
      if (closed) return;
      closed = true;
      closeQuietly(listener);
      await loop;
      guard.closeAll();
      await Deno.remove(path!).catch(() => {});
      if (dir) await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
