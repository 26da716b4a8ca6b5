/**
 * How a command is declared: its flags (one {@linkcode FlagSpecs}, which also
 * renders `--help`), and a handler that returns an exit code. Groups
 * (`service webhooks <verb>`) dispatch to verbs. Flag parsing, `--help`,
 * `--format`, `--verbose` and the platform connection flags are handled here
 * once for every command.
 *
 * @module
 */

import {
  checkFlagSpecs,
  environmentSource,
  type FlagSpecs,
  type ParsedFlags,
  parseFlags,
  type ParseResult,
} from "./flags.ts";
import { renderFlags } from "./flag_help.ts";
import { closest, wrapText } from "./text.ts";
import { type Format, FORMATS, type Io, Output } from "./output.ts";
import { UsageError } from "./errors.ts";
import type { TakeSignals } from "./stop_signals.ts";
import type { ClientOptions, PlatformClient } from "../platform/mod.ts";
import type { LoadedSources } from "./config_sources.ts";

/** What every command receives besides its arguments. */
export interface CommandContext {
  /** The process edge: streams and environment. */
  io: Io;
  /** fetch for platform clients; injectable in tests. */
  fetch?: typeof fetch;
  /** Clock; default `Date.now`. */
  now?: () => number;
  /**
   * Aborted when the process is asked to stop by a signal the command has
   * taken (see `takeSignals`); the reason is a `StopRequest` naming it.
   */
  signal?: AbortSignal;
  /**
   * Takes stop signals over from their default action (ending the process),
   * for a command that must stop cleanly. Given by `main.ts`; absent when
   * `run()` is called as a library (nothing then delivers OS signals).
   */
  takeSignals?: TakeSignals;
  /** The current directory (where `.env` is looked for); given by `main.ts`. */
  cwd?: string;
  /**
   * Where absent flags come from after the command line (environment, `.env`,
   * profile: `config_sources.ts`); built once per run by `run()`. Absent: the
   * environment alone.
   */
  sources?: () => Promise<LoadedSources>;
  /**
   * For each flag a leaf took from a source (environment, `.env`, profile): where from
   * (`parseFlags`'s `origins`); set by {@linkcode leaf} for its handler.
   */
  origins?: ReadonlyMap<string, string>;
}

/** A runnable command or group. */
export interface Command {
  /** One line for the parent's help. */
  summary: string;
  /** Runs with the arguments after the command's name; returns the exit code. */
  run(args: string[], ctx: CommandContext, path: string): Promise<number>;
  /** The rendered `--help` (for `service help <command>` and tests). */
  help?(path: string): string;
  /** A leaf's flags, common ones included (for completions). */
  flags?: FlagSpecs;
  /** A group's verbs (for completions and `service help <command> <verb>`). */
  verbs?: Record<string, GroupVerb>;
}

/** The widest line of any `--help` text. */
export const HELP_WIDTH = 100;

/** Flags every command has. */
export const commonFlags = {
  help: { type: "boolean", short: "h", description: "Show this help." },
  verbose: {
    type: "boolean",
    short: "v",
    env: "SERVICE_VERBOSE",
    description: "Log more: cause chains, request ids, HTTP status.",
  },
  noColor: {
    type: "boolean",
    description: "No colour (as NO_COLOR=1 in the environment does).",
  },
  profile: {
    type: "string",
    env: "SERVICE_PROFILE",
    placeholder: "NAME",
    description:
      "Take absent connection flags from this profile (service config set); flags, env and .env win.",
  },
  envFile: {
    type: "string",
    placeholder: "PATH",
    description: "Read variables from this file instead of ./.env (the environment wins).",
  },
  noEnvFile: {
    type: "boolean",
    description: "Do not read a .env file.",
  },
} as const satisfies FlagSpecs;

/** `--format` for commands that print records, with `--json` and `--wide`. */
export const formatFlag = {
  format: {
    type: "string",
    choices: FORMATS,
    placeholder: "FORMAT",
    description: "Output format (default: table on a terminal, ndjson otherwise).",
  },
  json: { type: "boolean", description: "Same as --format json." },
  wide: {
    type: "boolean",
    description: "Tables: every cell in full, even wider than the terminal.",
  },
} as const satisfies FlagSpecs;

/** The platform connection flags of cli.md. */
export const connectionFlags = {
  apiKey: {
    type: "string",
    env: "SERVICE_API_KEY",
    secret: true,
    placeholder: "KEY",
    description: "Platform API key.",
  },
  privateKey: {
    type: "string",
    env: "SERVICE_API_PRIVATE_KEY_PATH",
    secret: true,
    placeholder: "PATH|PEM",
    description: "The API key's RSA private key: a file path or the PEM text.",
  },
  apiBaseUrl: {
    type: "string",
    env: "SERVICE_API_BASE_URL",
    placeholder: "URL",
    description:
      "API base URL, with or without /v1 (default: the build's production address, if any).",
  },
  timeout: {
    type: "duration",
    default: 30_000,
    min: 100,
    max: 3_600_000,
    placeholder: "DURATION",
    description: "Timeout of one platform request, e.g. 30s.",
  },
  retries: {
    type: "integer",
    default: 4,
    min: 0,
    max: 20,
    description: "Retries of a failed platform request (network, 5xx, 408, 429).",
  },
} as const satisfies FlagSpecs;

/**
 * Usage lines in the one placeholder style of the flags section: the value
 * after a flag in angle brackets (`--webhookId W` → `--webhookId <W>`).
 */
function usagePlaceholders(usage: string): string {
  return usage.replace(/(--[A-Za-z]+)([ =])([A-Z][A-Za-z0-9_,.|]*)/g, "$1$2<$3>");
}

/** A leaf command's declaration. */
export interface LeafSpec<S extends FlagSpecs> {
  /** One line for the parent's help. */
  summary: string;
  /** Usage line after the command path, e.g. `--webhookId W [flags]`. */
  usage: string;
  /** Paragraphs shown under the usage line. */
  description?: string;
  /** The command's own flags (the common ones are added). */
  flags: S;
  /** Example command lines shown in `--help`. */
  examples?: string[];
  /** Maximum positionals; default 0. */
  maxPositionals?: number;
  /** Accepts `-- <command...>`. */
  acceptsRest?: boolean;
  /** `false`: flags come from the command line only (no env, `.env` or profile); default true. */
  sources?: boolean;
  /** The handler: parsed flags and positionals in, exit code out. */
  run(
    parsed: ParseResult<S & typeof commonFlags> & { flags: ParsedFlags<S & typeof commonFlags> },
    ctx: CommandContext & { out: Output; path: string; loaded?: LoadedSources },
  ): Promise<number>;
}

/**
 * Declares a leaf command.
 *
 * @example
 * ```ts
 * const hello = leaf({ summary: "Say hello.", usage: "", flags: {}, run: async (_p, c) => { await c.out.write("hi\n"); return 0; } });
 * ```
 */
export function leaf<S extends FlagSpecs>(
  spec: LeafSpec<S>,
): Command & { help(path: string): string } {
  const flags = { ...spec.flags, ...commonFlags } as S & typeof commonFlags;
  checkFlagSpecs(flags); // every number and duration declares its range (flags.ts)
  const help = (path: string) => {
    // A command's own flags first, then the platform connection, then the common ones.
    const section = (n: string) =>
      Object.hasOwn(commonFlags, n) ? 2 : Object.hasOwn(connectionFlags, n) ? 1 : 0;
    const inSection = (i: number): FlagSpecs =>
      Object.fromEntries(Object.entries(flags).filter(([n]) => section(n) === i));
    const width = HELP_WIDTH;
    return [
      `${spec.summary}`,
      "",
      // A flag and its placeholder stay on one line.
      wrapText(
        `Usage: ${path} ${usagePlaceholders(spec.usage)}`.trimEnd().replace(
          /(--\w+) </g,
          "$1\u00a0<",
        ),
        width,
        "  ",
      ).replaceAll("\u00a0", " "),
      ...(spec.description ? ["", wrapText(spec.description, width)] : []),
      ...["Flags:", "Connection flags:", "Common flags:"].flatMap((title, i) =>
        Object.values(inSection(i)).some((f) => !f.hidden)
          ? ["", title, renderFlags(inSection(i), width)]
          : []
      ),
      ...(spec.examples?.length
        ? ["", "Examples:", ...spec.examples.map((e) => wrapText(`  ${e}`, width, "      ", " \\"))]
        : []),
      "",
    ].join("\n");
  };
  return {
    summary: spec.summary,
    help,
    flags,
    async run(args, ctx, path) {
      const end = args.indexOf("--"); // what follows is the child command's
      const asked = end === -1 ? args : args.slice(0, end);
      if (asked.includes("--help") || asked.includes("-h")) {
        await new Output(ctx.io).write(help(path));
        return 0;
      }
      const loaded = spec.sources === false ? undefined : await ctx.sources?.();
      const parsed = parseFlags(flags, args, {
        command: path,
        sources: spec.sources === false ? [] : loaded?.sources ?? [environmentSource(ctx.io.env)],
        now: ctx.now,
        maxPositionals: spec.maxPositionals ?? 0,
      });
      if (parsed.rest !== undefined && !spec.acceptsRest) {
        throw new UsageError(`"${path}" takes no command after "--". Run "${path} --help".`);
      }
      const f = parsed.flags as Record<string, unknown>;
      if (f.json === true) {
        if (f.format !== undefined && f.format !== "json" && parsed.given.has("format")) {
          throw new UsageError(
            `--json and --format ${f.format} contradict each other: give one of them.`,
          );
        }
        f.format = "json";
        parsed.given.add("format");
      }
      const out = new Output(ctx.io, {
        format: f.format as Format | undefined,
        verbose: f.verbose === true,
        color: f.noColor !== true,
        wide: f.wide === true,
      });
      try {
        return await spec.run(parsed as never, {
          ...ctx,
          out,
          path,
          loaded,
          origins: parsed.origins,
        });
      } finally {
        await out.clearProgress().catch(() => {});
      }
    },
  };
}

/** One verb of a {@linkcode group}: its summary, and its command loaded on demand. */
export interface GroupVerb {
  /** One line for the group's help. */
  summary: string;
  /** Loads the verb's command. */
  load: () => Promise<Command>;
}

/** A verb as {@linkcode group} takes it: a command, or `[summary, loader]` for a lazy module. */
export type VerbEntry = Command | readonly [string, () => Promise<Command>];

/**
 * Verbs (or the top-level commands) from their entries: a command declared beside the group
 * (its own summary), or a `[summary, loader]` pair for one in a module of its own, imported
 * only when run, so that help stays instant.
 */
export function groupVerbs(entries: Record<string, VerbEntry>): Record<string, GroupVerb> {
  return Object.fromEntries(
    Object.entries(entries).map(([name, e]) => [
      name,
      Array.isArray(e)
        ? { summary: e[0], load: e[1] }
        : { summary: (e as Command).summary, load: () => Promise.resolve(e as Command) },
    ]),
  );
}

/** Options of {@linkcode group}. */
export interface GroupOptions {
  /** Paragraphs shown under the usage line of its help. */
  description?: string;
  /** The top level's help text, instead of a generated one: its verbs are called commands. */
  topHelp?: () => string;
}

/**
 * Declares a group of verbs, e.g. `service webhooks <verb>` ({@linkcode groupVerbs}), or the
 * top level of commands. `<group> help <verb> ...` is `<group> <verb> ... --help`.
 *
 * @example
 * ```ts
 * declare const list: Command;
 * const webhooks = group("Webhook endpoints.", {
 *   list,
 *   verify: ["Check.", async () => (await import("./webhooks/verify.ts")).verifyCommand],
 * });
 * ```
 */
export function group(
  summary: string,
  entries: Record<string, VerbEntry>,
  { description, topHelp }: GroupOptions = {},
): Command & { verbs: Record<string, GroupVerb> } {
  const verbs = groupVerbs(entries);
  const help = (path: string) =>
    topHelp?.() ?? [
      wrapText(summary, HELP_WIDTH),
      "",
      `Usage: ${path} <verb> [flags]`,
      ...(description ? ["", wrapText(description, HELP_WIDTH)] : []),
      "",
      "Verbs:",
      ...Object.entries(verbs).map(([n, v]) =>
        wrapText(`  ${n.padEnd(20)}${v.summary}`, HELP_WIDTH, " ".repeat(22))
      ),
      "",
      `Run "${path} <verb> --help" for a verb's flags.`,
      "",
    ].join("\n");
  return {
    summary,
    help,
    verbs,
    async run(args, ctx, path) {
      let [verb, ...rest] = args;
      if (verb === "help" && rest[0] !== undefined && !rest[0].startsWith("-")) {
        [verb, ...rest] = [...rest, "--help"];
      }
      if (verb === undefined || verb === "--help" || verb === "-h" || verb === "help") {
        await new Output(ctx.io).write(help(path));
        return verb === undefined ? 2 : 0;
      }
      const entry = Object.hasOwn(verbs, verb) ? verbs[verb] : undefined;
      if (!entry) {
        const guess = closest(verb, Object.keys(verbs));
        throw new UsageError(
          `Unknown ${topHelp ? "command" : "verb"} "${verb}"${topHelp ? "" : ` for "${path}"`}: ` +
            `expected one of ${Object.keys(verbs).join(", ")}.` +
            `${guess ? ` Did you mean "${path} ${guess}"?` : ""} Run "${path} --help".`,
        );
      }
      return (await entry.load()).run(rest, ctx, `${path} ${verb}`);
    },
  };
}

/**
 * Builds the platform client from the connection flags (or their variables).
 * Missing or malformed credentials throw a usage-class error (exit 2).
 */
export async function platformClient(
  flags: {
    apiKey?: string;
    privateKey?: string;
    apiBaseUrl?: string;
    timeout?: number;
    retries?: number;
  },
  ctx: CommandContext & { out: Output },
  extra: ClientOptions = {},
): Promise<PlatformClient> {
  // The two modules, not the barrel: it loads every platform area (webhooks, vaults, ...)
  // and with them zod, which the bridge needs only at its first signing call.
  const [{ loadCredentials }, { PlatformClient }] = await Promise.all([
    import("../platform/credentials.ts"),
    import("../platform/client.ts"),
  ]);
  return new PlatformClient(await loadCredentials(flags), {
    fetch: ctx.fetch,
    now: ctx.now,
    timeoutMs: flags.timeout,
    retries: flags.retries,
    onRetry: (i) => {
      void ctx.out.debug(
        `retrying ${i.operation} (attempt ${i.attempt + 1}) in ${i.waitMs} ms after ${i.reason}`,
      );
    },
    ...extra,
  });
}

/**
 * {@linkcode platformClient}, and the platform's API module beside it (loaded on demand, as
 * every command that talks to the platform needs both).
 */
export async function platformApi(
  flags: Parameters<typeof platformClient>[0],
  ctx: CommandContext & { out: Output },
): Promise<{ client: PlatformClient; api: typeof import("../platform/mod.ts") }> {
  return { client: await platformClient(flags, ctx), api: await import("../platform/mod.ts") };
}
