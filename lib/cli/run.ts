/**
 * The top-level dispatch table and `run()`, which turns arguments into an
 * exit code. Only light modules are imported here; subcommands are imported
 * lazily so that `--help` and `--version` load neither the platform client, nor
 * zod (its answer checks), nor the EVM library.
 *
 * @module
 */

import { type CommandContext, group, type GroupVerb, HELP_WIDTH } from "./command.ts";
import { describeError, exitCodeFor } from "./errors.ts";
import { wrapText } from "./text.ts";
import { Output, StdoutClosedError, writeAll } from "./output.ts";
import { VERSION } from "../version.ts";

/** `service <command>`: the top-level commands, loaded on demand. */
const service = group("service", {
  rpc: [
    "Run a local JSON-RPC node whose accounts sign through the platform, around a child command.",
    async () => (await import("./rpc.ts")).rpcCommand,
  ],
  notifications: [
    "List, inspect and resend a webhook's notifications.",
    async () => (await import("./notifications.ts")).notificationsCommand,
  ],
  webhooks: [
    "Webhook endpoints: create, list, change, delete, reactivate; verify; listen locally.",
    async () => (await import("./webhooks.ts")).webhooksCommand,
  ],
  breaker: [
    "Replay delivery logs against the retry schedule and the circuit breaker, offline.",
    async () => (await import("./breaker.ts")).breakerCommand,
  ],
  emulator: [
    "Run a local stand-in for the platform (API, signing on a real chain, webhook delivery).",
    async () => (await import("./emulator.ts")).emulatorCommand,
  ],
  completions: [
    "Print a shell completion script: bash, zsh or fish.",
    async () => (await import("./completions.ts")).completionsCommand,
  ],
  config: [
    "Profiles of connection settings: set, list, show, remove.",
    async () => (await import("./config.ts")).configCommand,
  ],
  whoami: [
    "Check the credentials against the platform and say which environment answered.",
    async () => (await import("./whoami.ts")).whoamiCommand,
  ],
}, { topHelp });

/** The top-level commands, loaded on demand. */
export const COMMANDS: Record<string, GroupVerb> = service.verbs;

function topHelp(): string {
  return [
    `service ${VERSION}: custody-platform tools for EVM developers and webhook operators.`,
    "",
    "Usage: service <command> [flags]",
    "",
    "Commands:",
    ...Object.entries(COMMANDS).map(([n, c]) =>
      wrapText(`  ${n.padEnd(15)}${c.summary}`, HELP_WIDTH, " ".repeat(17))
    ),
    "",
    "Flags:",
    "  -h, --help       Show help (also after any command).",
    "  --version        Print the version.",
    "",
    'Run "service <command> --help" (or "service help <command> [verb]") for a command\'s flags.',
    "",
  ].join("\n");
}

/**
 * Runs the CLI with `args` and returns the exit code. Errors are printed as
 * one line on standard error (more with `--verbose`), never a stack trace.
 *
 * @example
 * ```ts
 * import { denoIo } from "./output.ts";
 * const code = await run(["--version"], { io: denoIo() });
 * ```
 */
export async function run(args: string[], ctx: CommandContext): Promise<number> {
  const verbose = args.includes("--verbose") || args.includes("-v") ||
    args.includes("--verbose=true");
  try {
    const isVersion = (a: string | undefined) => a === "--version" || a === "-V";
    // `service-json-rpc --version` arrives as `rpc --version` (main.ts, the npm launcher).
    if (isVersion(args[0]) || args[0] === "version" || (args[0] === "rpc" && isVersion(args[1]))) {
      await writeAll(ctx.io.stdout, `service ${VERSION}\n`);
      return 0;
    }
    // Where absent flags come from (env, .env, profile): built once, when a command asks.
    let loaded: ReturnType<NonNullable<CommandContext["sources"]>> | undefined;
    const sources = ctx.sources ?? (async () => {
      const { loadValueSources } = await import("./config_sources.ts");
      return await (loaded ??= loadValueSources({ args, env: ctx.io.env, cwd: ctx.cwd }));
    });
    return await service.run(args, { ...ctx, sources }, "service");
  } catch (error) {
    // The reader of standard output went away (`| head`): end quietly.
    if (error instanceof StdoutClosedError) return exitCodeFor(error);
    const color = !args.includes("--no-color") && !args.includes("--noColor");
    const out = new Output(ctx.io, { verbose, color });
    // One printer line per line of the description: the printer escapes a newline inside one.
    const [first, ...more] = describeError(error, verbose).split("\n");
    await out.error(first);
    for (const line of more) await out.log(line);
    return exitCodeFor(error);
  }
}
