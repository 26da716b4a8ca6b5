/**
 * Serves a `(Request) => Promise<Response>` handler over HTTP/1.1 with
 * `node:http`, because fault injection must be able to drop a connection
 * without any answer (`Deno.serve` always sends the status line first). A
 * response carrying the drop marker (`isDropResponse`; made by
 * `../faults/apply.ts`, where the drop fault is decided) destroys the socket.
 * Bodies are read up to `maxBodyBytes + 1` bytes; the rest is discarded and
 * the handler answers 413.
 *
 * @module
 */

import http from "node:http";
import type { AddressInfo } from "node:net";
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
 * const server = await serveHandler(handle, { hostname: "127.0.0.1", port: 0, maxBodyBytes: 1 << 20 });
 * ```
 */
export async function serveHandler(
  handler: (request: Request) => Promise<Response>,
  options: { hostname: string; port: number; maxBodyBytes: number; onError?: (e: unknown) => void },
): Promise<HttpServer> {
  const onError = options.onError ?? (() => {});
  const server = http.createServer((req, res) => {
    const chunks: Uint8Array[] = [];
    let total = 0;
    let over = false;
    req.on("data", (c: Uint8Array) => {
      if (over) return;
      const room = options.maxBodyBytes + 1 - total;
      if (c.length > room) {
        chunks.push(c.subarray(0, room));
        total += room;
        over = true;
      } else {
        chunks.push(c);
        total += c.length;
      }
    });
    req.on("error", () => {});
    req.on("end", async () => {
      try {
        const body = new Uint8Array(total);
        let o = 0;
        for (const c of chunks) {
          body.set(c, o);
          o += c.length;
        }
        const headers = new Headers();
        const raw = req.rawHeaders;
        for (let i = 0; i + 1 < raw.length; i += 2) {
          const k = raw[i].toLowerCase();
          if (k === "content-length" || k === "transfer-encoding") continue;
          try {
            headers.append(raw[i], raw[i + 1]);
          } catch { /* invalid header value: skip */ }
        }
        const host = `${
          options.hostname.includes(":") ? `[${options.hostname}]` : options.hostname
        }:${(server.address() as AddressInfo).port}`;
        const method = (req.method ?? "GET").toUpperCase();
        let url: string;
        try {
          url = new URL(req.url ?? "/", `http://${host}`).href;
        } catch {
          url = `http://${host}/`;
        }
        const hasBody = method !== "GET" && method !== "HEAD" && total > 0;
        const request = new Request(url, {
          method,
          headers,
          body: hasBody ? body : undefined,
        });
        const response = await handler(request);
        if (isDropResponse(response)) {
          req.socket.destroy();
          return;
        }
        const out: Record<string, string | string[]> = {};
        response.headers.forEach((v, k) => {
          out[k] = v;
        });
        const bytes = new Uint8Array(await response.arrayBuffer());
        if (over) out["connection"] = "close";
        res.writeHead(response.status, out);
        res.end(bytes);
      } catch (e) {
        onError(e);
        try {
          res.writeHead(500, { "content-type": "application/json" });
          res.end(JSON.stringify({ message: "Internal error of the emulator.", code: 1500 }));
        } catch {
          req.socket.destroy();
        }
      }
    });
  });
  server.on("clientError", (_err, socket) => {
    try {
      socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    } catch { /* gone */ }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    hostname: options.hostname,
    port,
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      });
    },
  };
}
