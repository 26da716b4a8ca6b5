/**
 * Real peers for tests: the anvil, cast and forge binaries from npm, the Deno
 * running the tests, and helpers to start anvil and to spawn `main.ts` as a
 * user would. No mocks here.
 *
 * @module
 */

import { mainCommand } from "./main_command.ts";

export { ROOT } from "./main_command.ts";

export { type Anvil, foundryBin, startAnvil } from "../../scripts/anvil.ts";

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
  const child = mainCommand(args, {
    cwd: options.cwd,
    env: options.env,
    stdin: options.stdin !== undefined ? "piped" : "null",
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
