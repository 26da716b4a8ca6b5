/**
 * Runs the real emulator as a user would (`deno run -A main.ts emulator ...`),
 * reads its one `ready` line, and gives tests an authenticated API client
 * (the project's own platform client) plus ways to stop or SIGKILL it.
 *
 * @module
 */

import { type Anvil, startAnvil } from "./tools.ts";
import { mainCommand } from "./main_command.ts";
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
  /** Every API user, the default ADMIN first (`--apiUser ROLE[:NAME]` adds more). */
  apiUsers: { name: string; role: string; apiKey: string; privateKeyPath: string }[];
  consoleUrl: string;
  jwksUrl: string;
  adminUrl: string;
}

/** An answer of {@linkcode EmulatorProcess.api}, 2xx or not. */
export interface ApiAnswer<T = unknown> {
  status: number;
  data: T;
  headers: Headers;
}

/** `service emulator` run as a process, after its ready line. */
export interface EmulatorChild {
  ready: ReadyLine;
  process: Deno.ChildProcess;
  /** Everything it wrote on standard output after the ready line (should stay empty). */
  stdoutRest(): string;
  /** Everything it wrote on standard error so far. */
  stderr(): string;
  /** Sends `signal` (default SIGTERM) and waits for the exit status. */
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
  /** SIGKILL and wait (no clean shutdown). */
  kill(): Promise<Deno.CommandStatus>;
}

/** A running emulator process with a signed API helper. */
export interface EmulatorProcess extends EmulatorChild {
  /** One request, signed like any client's; never throws for a 4xx/5xx answer. */
  api<T = unknown>(
    method: "GET" | "POST" | "PATCH" | "DELETE",
    path: string,
    opts?: { body?: unknown; query?: Record<string, QueryValue>; idempotencyKey?: string },
  ): Promise<ApiAnswer<T>>;
}

/** How {@linkcode spawnEmulator} runs the emulator. */
export interface EmulatorSpawnOptions {
  /** Runs it under `ulimit -n` this many descriptors. */
  fileLimit?: number;
  /** Deno's arguments before `emulator` (default `run -A <checkout>/main.ts`), e.g. a bundle's. */
  program?: string[];
}

/**
 * Spawns `deno run -A main.ts emulator ...args` with a clean environment and
 * waits for its ready line (fails after 60 s, with what it wrote on stderr).
 */
export async function spawnEmulator(
  args: string[],
  options: EmulatorSpawnOptions = {},
): Promise<EmulatorChild> {
  const child = mainCommand(["emulator", ...args], {
    fileLimit: options.fileLimit,
    program: options.program,
  }).spawn();
  let err = "";
  let out = "";
  const dec = new TextDecoder();
  const errDone = (async () => {
    for await (const c of child.stderr) err += dec.decode(c, { stream: true });
  })().catch(() => {});
  let resolveLine: (l: string | undefined) => void = () => {};
  const firstLine = new Promise<string | undefined>((r) => resolveLine = r);
  const outDone = (async () => {
    for await (const c of child.stdout) {
      out += dec.decode(c, { stream: true });
      const nl = out.indexOf("\n");
      if (nl >= 0) resolveLine(out.slice(0, nl));
    }
    resolveLine(undefined);
  })().catch(() => resolveLine(undefined));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((r) => timer = setTimeout(() => r(undefined), 60_000));
  const line = await Promise.race([firstLine, timeout]);
  clearTimeout(timer);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const stop = async (signal: Deno.Signal = "SIGTERM") => {
    if (!exited) {
      try {
        child.kill(signal);
      } catch { /* gone */ }
    }
    const s = await status;
    await errDone;
    await outDone;
    return s;
  };
  if (!line) {
    await stop("SIGKILL");
    throw new Error(`The emulator did not print its ready line. stderr:\n${err}`);
  }
  return {
    ready: JSON.parse(line),
    process: child,
    stdoutRest: () => out.slice(out.indexOf("\n") + 1),
    stderr: () => err,
    stop,
    kill: () => stop("SIGKILL"),
  };
}

/** A platform client for a ready line (reads the key file, as a user would). */
export async function clientForReady(ready: ReadyLine): Promise<PlatformClient> {
  return new PlatformClient(
    await loadCredentials({
      apiKey: ready.apiKey,
      privateKey: ready.privateKeyPath,
      apiBaseUrl: ready.apiBaseUrl,
    }),
    { retries: 0, timeoutMs: 30_000 },
  );
}

/** An `api()` over `client`: one signed request that never throws for a 4xx/5xx answer. */
export function apiCaller(client: PlatformClient): EmulatorProcess["api"] {
  return async (method, path, opts = {}) => {
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
  };
}

/**
 * Spawns the emulator on the node at `rpcUrl` (e.g. anvil) with `args` after
 * `emulator --port 0 --rpcUrl URL`, and adds a signed API helper.
 */
export async function startEmulatorProcess(
  rpcUrl: string,
  args: string[] = [],
  options: EmulatorSpawnOptions = {},
): Promise<EmulatorProcess> {
  const emu = await spawnEmulator(["--port", "0", "--rpcUrl", rpcUrl, ...args], options);
  const client = await clientForReady(emu.ready);
  return {
    ...emu,
    api: apiCaller(client),
  };
}

/** Re-exported for the tests that import it from here; it lives in `wait_for.ts`. */
export { waitFor } from "./wait_for.ts";

/** An emulator process on its own fresh anvil; `stop()` stops both. */
export async function startEmulatorOnAnvil(
  args: string[] = [],
  options: EmulatorSpawnOptions = {},
): Promise<EmulatorProcess & { anvil: Anvil }> {
  const anvil = await startAnvil();
  let emu: EmulatorProcess;
  try {
    emu = await startEmulatorProcess(anvil.url, args, options);
  } catch (e) {
    await anvil.stop();
    throw e;
  }
  return {
    ...emu,
    anvil,
    async stop(signal?: Deno.Signal) {
      const s = await emu.stop(signal);
      await anvil.stop();
      return s;
    },
  };
}
