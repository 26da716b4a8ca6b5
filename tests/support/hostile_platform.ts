/**
 * A platform that misbehaves, for the bounds of what `service` reads from
 * it (issue 32): a small real HTTP server on 127.0.0.1 (port 0) whose
 * routes each play one behaviour (answer pages larger than asked with a new
 * `next` forever, repeat a cursor, list notifications created long ago,
 * ...). It does not check credentials: what is tested is what the client
 * does with the answers. Not a mock of the platform's rules: the emulator
 * plays those.
 *
 * @module
 */

/** One route's behaviour: the request, its URL and the route's `:name` values. */
export type Behaviour = (
  req: Request,
  url: URL,
  params: Record<string, string>,
) => Response | Promise<Response>;

/** A running hostile platform. */
export interface HostilePlatform {
  /** `http://127.0.0.1:PORT`, for `--apiBaseUrl`. */
  baseUrl: string;
  /** Requests answered so far. */
  requests(): number;
  /** Stops the server. */
  close(): Promise<void>;
}

/** A JSON answer (200 unless given). */
export function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/**
 * Serves `routes` (`"GET /v1/webhooks/:id/notifications"` → behaviour) on
 * loopback; any other request is a 404 in the platform's error shape.
 *
 * @example
 * ```ts
 * const p = startHostilePlatform({ "GET /v1/webhooks/:id": () => json({ id: "w1" }) });
 * await p.close();
 * ```
 */
export function startHostilePlatform(routes: Record<string, Behaviour>): HostilePlatform {
  const table = Object.entries(routes).map(([key, behaviour]) => {
    const [method, path] = key.split(" ");
    const names: string[] = [];
    const re = new RegExp(
      "^" + path.replace(/:(\w+)/g, (_, n) => (names.push(n), "([^/]+)")) + "$",
    );
    return { method, re, names, behaviour };
  });
  let count = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    count++;
    const url = new URL(req.url);
    for (const r of table) {
      const m = req.method === r.method ? r.re.exec(url.pathname) : null;
      if (m === null) continue;
      const params: Record<string, string> = {};
      r.names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1])));
      return r.behaviour(req, url, params);
    }
    return json({ code: 404, message: `no route ${req.method} ${url.pathname}` }, 404);
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}`,
    requests: () => count,
    close: () => server.shutdown(),
  };
}

/**
 * Runs `deno run -A main.ts ...args` (through `command`) and polls the peak
 * resident memory of its process tree (the child and its descendants,
 * `VmHWM` from /proc, summed) until it exits or `timeoutMs` passes (then it
 * is killed: `timedOut`).
 */
export async function runMeasured(
  command: Deno.Command,
  timeoutMs: number,
): Promise<{ code: number; stdout: string; stderr: string; peakMb: number; timedOut: boolean }> {
  const child = command.spawn();
  let peakKb = 0;
  let done = false;
  const tree = (pid: number): number[] => {
    const out = [pid];
    try {
      for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
        const kids = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/children`).trim();
        for (const k of kids ? kids.split(/\s+/) : []) out.push(...tree(Number(k)));
      }
    } catch { /* ended */ }
    return out;
  };
  const poll = (async () => {
    while (!done) {
      let kb = 0;
      for (const pid of tree(child.pid)) {
        try {
          const m = Deno.readTextFileSync(`/proc/${pid}/status`).match(/VmHWM:\s+(\d+) kB/);
          if (m) kb += Number(m[1]);
        } catch { /* ended */ }
      }
      peakKb = Math.max(peakKb, kb);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch { /* ended */ }
  }, timeoutMs);
  const out = await child.output();
  clearTimeout(timer);
  done = true;
  await poll;
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
    peakMb: peakKb / 1024,
    timedOut,
  };
}
