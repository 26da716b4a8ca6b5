/**
 * A hostile peer on loopback: a real HTTP server (127.0.0.1, port 0) that
 * answers each route with a behaviour a test gives it — an answer without end,
 * pages forever, a job that never finishes, a secret echoed back. Routes are
 * `"METHOD /path"` with `*` for one path segment; the first match wins; no
 * match answers 404. Small on purpose: each test writes its misbehaviour.
 *
 * @module
 */

/** What a route does with a request. */
export type Behaviour = (request: Request, url: URL) => Response | Promise<Response>;

/** A running hostile peer. */
export interface HostilePeer {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  url: string;
  /** How many requests each route answered. */
  hits: Map<string, number>;
  /** Stops the server (open connections are closed). */
  close(): Promise<void>;
}

function matches(route: string, method: string, path: string): boolean {
  const [m, p] = route.split(" ");
  if (m !== method) return false;
  const want = p.split("/");
  const got = path.split("/");
  return want.length === got.length && want.every((w, i) => w === "*" || w === got[i]);
}

/** Starts a peer answering `routes`. */
export function startHostilePeer(routes: Record<string, Behaviour>): HostilePeer {
  const hits = new Map<string, number>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    for (const [route, behave] of Object.entries(routes)) {
      if (matches(route, req.method, url.pathname)) {
        hits.set(route, (hits.get(route) ?? 0) + 1);
        return behave(req, url);
      }
    }
    return new Response("no such route", { status: 404 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    hits,
    close: async () => {
      await server.shutdown();
    },
  };
}

/** A body that never ends: `chunk` again and again, as fast as it is read. */
export function endlessBody(chunkBytes = 64 * 1024): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(chunkBytes).fill(0x61);
  return new ReadableStream({
    pull(controller) {
      controller.enqueue(chunk);
    },
  });
}

/** JSON with `status`. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/**
 * The peak resident set (VmHWM, KiB) of process `pid` as Linux reports it, or `undefined`
 * once the process is gone. The high-water mark never falls, so the last reading before a
 * process ends is its peak up to then.
 */
export function peakRssKiB(pid: number): number | undefined {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const m = /^VmHWM:\s+(\d+) kB/m.exec(status);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Follows the peak resident set of `pid` every 50 ms until stopped; `stop()` gives the
 * highest reading (KiB).
 */
export function watchPeakRss(pid: number): { stop(): number } {
  let peak = 0;
  const read = () => {
    const v = peakRssKiB(pid);
    if (v !== undefined && v > peak) peak = v;
  };
  read();
  const timer = setInterval(read, 50);
  return {
    stop() {
      read();
      clearInterval(timer);
      return peak;
    },
  };
}
