/**
 * anvil, cast and forge from npm (`@foundry-rs/<name>-linux-amd64`), and
 * starting anvil on a free port. Shared by the demo, the benchmarks and the
 * tests (re-exported by `tests/support/tools.ts`).
 *
 * @module
 */

const ROOT = new URL("../", import.meta.url).pathname;

/** Path of a Foundry binary installed from npm (`@foundry-rs/<name>-linux-amd64`), or on PATH. */
export function foundryBin(name: "anvil" | "cast" | "forge"): string {
  const p = `${ROOT}node_modules/@foundry-rs/${name}-linux-amd64/bin/${name}`;
  try {
    Deno.statSync(p);
    return p;
  } catch {
    return name;
  }
}

/** A running anvil. */
export interface Anvil {
  url: string;
  port: number;
  process: Deno.ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts anvil on a free port and waits for it to listen.
 * Extra args e.g. `["--block-time", "1"]`.
 */
export async function startAnvil(extra: string[] = []): Promise<Anvil> {
  const child = new Deno.Command(foundryBin("anvil"), {
    args: ["--port", "0", ...extra],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  const deadline = Date.now() + 20_000;
  let port = 0;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    const m = buf.match(/Listening on [\d.]+:(\d+)/);
    if (m) {
      port = Number(m[1]);
      break;
    }
  }
  // keep draining stdout so anvil never blocks on a full pipe
  (async () => {
    try {
      while (!(await reader.read()).done) { /* drain */ }
    } catch { /* closed */ }
  })();
  child.stderr.cancel().catch(() => {});
  if (!port) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    throw new Error(`anvil did not start: ${buf.slice(0, 500)}`);
  }
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    process: child,
    async stop() {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await child.status;
    },
  };
}
