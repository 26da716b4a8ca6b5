/**
 * Serves the emulator's `(Request) => Promise<Response>` handler with the
 * connection bounds every long-running command shares
 * (`../../core/bounded_server.ts`: a cap on open connections with the oldest
 * idle shed, header and idle timeouts, an accept loop that survives running
 * out of file descriptors). The server owns each connection, so a response
 * carrying the drop marker (`isDropResponse`; made by `../faults/apply.ts`,
 * where the drop fault is decided) closes it without any answer. Bodies are
 * read by the handler, which stops at `maxBodyBytes` (413) and at the
 * server's body timeout (408, connection closed).
 *
 * @module
 */

import { serveBounded } from "../../core/bounded_server.ts";
import { isDropResponse } from "./reply.ts";

/** A listening server. */
export interface HttpServer {
  /** The interface listened on. */
  hostname: string;
  /** The port listened on. */
  port: number;
  /** Stops accepting, closes idle and active connections. */
  close(): Promise<void>;
}

/**
 * Listens on `hostname:port` (0 = a free port) and serves `handler`.
 *
 * @example
 * ```ts
 * const handle = (_request: Request) => Promise.resolve(new Response("ok"));
 * const server = await serveHandler(handle, { hostname: "127.0.0.1", port: 0 });
 * ```
 */
export async function serveHandler(
  handler: (request: Request) => Promise<Response>,
  options: { hostname: string; port: number; onError?: (e: unknown) => void },
): Promise<HttpServer> {
  const server = await serveBounded(handler, {
    hostname: options.hostname,
    port: options.port,
    isDrop: isDropResponse,
    onError: (e) => {
      options.onError?.(e);
      return new Response(
        JSON.stringify({ message: "Internal error of the emulator.", code: 1500 }),
        { status: 500, headers: { "content-type": "application/json" } },
      );
    },
  });
  return { hostname: server.hostname, port: server.port, close: () => server.close() };
}
