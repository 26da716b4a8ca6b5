/**
 * One `wrk` run of JSON-RPC POSTs (the same body every time) against a URL:
 * requests per second and the median latency. Needs `wrk` (Debian: `apt-get
 * install -y wrk`).
 *
 * @module
 */

/** What one `wrk` run measured. */
export interface WrkResult {
  /** Requests per second over the run. */
  rps: number;
  /** Median latency, ms (wrk's `--latency` 50% line). */
  p50: number;
  /** wrk's whole output. */
  text: string;
}

/** How to run `wrk`: connections (2 threads unless 1 connection) and seconds. */
export interface WrkOptions {
  connections: number;
  seconds: number;
}

/** The `wrk` command line for `url` (the Lua script's path given), for printing. */
export function wrkArgs(url: string, lua: string, o: WrkOptions): string[] {
  return [
    o.connections > 1 ? "-t2" : "-t1",
    `-c${o.connections}`,
    `-d${o.seconds}s`,
    "--latency",
    "-s",
    lua,
    url,
  ];
}

/** Reads requests/s and the median latency (ms) out of wrk's output (NaN when missing). */
export function parseWrk(text: string): { rps: number; p50: number } {
  const rps = Number(text.match(/Requests\/sec:\s+([\d.]+)/)?.[1]);
  const m = text.match(/\s50%\s+([\d.]+)(us|ms|s)\b/);
  const p50 = m
    ? Number((Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1)).toFixed(3))
    : NaN;
  return { rps, p50 };
}

/** Runs wrk POSTing `body` to `url`; warns on stderr when wrk saw non-2xx answers. */
export async function wrk(url: string, body: string, o: WrkOptions): Promise<WrkResult> {
  const lua = await Deno.makeTempFile({ suffix: ".lua" });
  try {
    await Deno.writeTextFile(
      lua,
      `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${
        JSON.stringify(body)
      }\n`,
    );
    const out = await new Deno.Command("wrk", {
      args: wrkArgs(url, lua, o),
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    if (/Non-2xx/.test(text)) console.error("warning: wrk saw non-2xx answers:\n" + text);
    return { ...parseWrk(text), text };
  } finally {
    await Deno.remove(lua).catch(() => {});
  }
}
