/**
 * Runs the real emulator as a user would (`deno run -A main.ts emulator ...`),
 * reads its one `ready` line, and gives tests an authenticated API client
 * (the project's own platform client) plus ways to stop or SIGKILL it.
 *
 * @module
 */

import { type Anvil, ROOT, startAnvil } from "./tools.ts";
import {
  loadCredentials,
  PlatformApiError,
  PlatformClient,
  type QueryValue,
} from "../../lib/platform/mod.ts";

/** The emulator's ready line. */
export interface ReadyLine {
  event: "ready";
  apiBaseUrl: string;
  apiKey: string;
  privateKeyPath: string;
  consoleUrl: string;
  jwksUrl: string;
}

/** An answer of {@linkcode EmulatorProcess.api}, 2xx or not. */
export interface ApiAnswer<T = unknown> {
  status: number;
  data: T;
  headers: Headers;
}

/** A running emulator process. */
export interface EmulatorProcess {
  ready: ReadyLine;
  process: Deno.ChildProcess;
  /** Everything it wrote on standard error so far. */
  stderr(): string;
  /** One request, signed like any client's; never throws for a 4xx/5xx answer. */
  api<T = unknown>(
    method: "GET" | "POST" | "PATCH" | "DELETE",
    path: string,
    opts?: { body?: unknown; query?: Record<string, QueryValue>; idempotencyKey?: string },
  ): Promise<ApiAnswer<T>>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** SIGKILL and wait (no clean shutdown). */
  kill(): Promise<void>;
}

/**
 * Spawns the emulator on the node at `rpcUrl` (e.g. anvil) with `args` after `emulator --port 0` and waits for
 * its ready line (fails after 60 s, with what it wrote on stderr).
 */
export async function startEmulatorProcess(
  rpcUrl: string,
  args: string[] = [],
): Promise<EmulatorProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}main.ts`, "emulator", "--port", "0", "--rpcUrl", rpcUrl, ...args],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { RUST_BACKTRACE: "0", NO_COLOR: "1" },
  }).spawn();
  let err = "";
  const errDone = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stderr) err += dec.decode(chunk, { stream: true });
  })().catch(() => {});
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let ready: ReadyLine | undefined;
  const deadline = Date.now() + 60_000;
  while (!ready && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    const nl = buf.indexOf("\n");
    if (nl >= 0) ready = JSON.parse(buf.slice(0, nl));
  }
  (async () => {
    try {
      while (!(await reader.read()).done) { /* drain */ }
    } catch { /* closed */ }
  })();
  if (!ready) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await child.status;
    await errDone;
    throw new Error(`The emulator did not print its ready line. stderr:\n${err}`);
  }
  const creds = await loadCredentials({
    apiKey: ready.apiKey,
    privateKey: ready.privateKeyPath,
    apiBaseUrl: ready.apiBaseUrl,
  });
  const client = new PlatformClient(creds, { retries: 0, timeoutMs: 30_000 });
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const end = async (sig: Deno.Signal) => {
    if (!exited) {
      try {
        child.kill(sig);
      } catch { /* gone */ }
    }
    await status;
    await errDone;
  };
  return {
    ready,
    process: child,
    stderr: () => err,
    async api(method, path, opts = {}) {
      try {
        const r = await client.request(method, path, {
          operation: `${method} ${path}`,
          body: opts.body,
          query: opts.query,
          idempotencyKey: opts.idempotencyKey,
        });
        return { status: r.status, data: r.data as never, headers: r.headers };
      } catch (e) {
        if (e instanceof PlatformApiError) {
          return { status: e.status, data: e.body as never, headers: new Headers() };
        }
        throw e;
      }
    },
    stop: () => end("SIGTERM"),
    kill: () => end("SIGKILL"),
  };
}

/** Polls `fn` every `everyMs` until it returns a truthy value (returned) or `timeoutMs` passes (throws with `what`). */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T> | T,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) {
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** An emulator process on its own fresh anvil; `stop()` stops both. */
export async function startEmulatorOnAnvil(
  args: string[] = [],
): Promise<EmulatorProcess & { anvil: Anvil }> {
  const anvil = await startAnvil();
  let emu: EmulatorProcess;
  try {
    emu = await startEmulatorProcess(anvil.url, args);
  } catch (e) {
    await anvil.stop();
    throw e;
  }
  return {
    ...emu,
    anvil,
    async stop() {
      await emu.stop();
      await anvil.stop();
    },
  };
}
