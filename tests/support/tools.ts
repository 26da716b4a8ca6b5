/**
 * Real peers for tests: the anvil, cast and forge binaries from npm, the Deno
 * running the tests, and helpers to start anvil and to spawn `main.ts` as a
 * user would. No mocks here.
 *
 * @module
 */

export const ROOT = new URL("../../", import.meta.url).pathname;

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

/** The result of running `main.ts`. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `deno run -A main.ts ...args` as a user would, with a clean environment plus `env`. */
export async function runCli(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}main.ts`, ...args],
    cwd: options.cwd ?? ROOT,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: Deno.env.get("HOME") ?? "/tmp",
      DENO_DIR: Deno.env.get("DENO_DIR") ?? "",
      DENO_TLS_CA_STORE: "system",
      RUST_BACKTRACE: "0",
      NO_COLOR: "1",
      ...options.env,
    },
    stdin: options.stdin !== undefined ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
  }).spawn();
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(options.stdin));
    await w.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
