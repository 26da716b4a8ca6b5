/**
 * Where a flag's value comes from, decided once for every command:
 *
 *   command line > environment (`SERVICE_*`) > `.env` file > profile > default
 *
 * The `.env` file is `./.env` in the current directory, or `--envFile PATH`;
 * `--noEnvFile` skips it. The profile is `--profile NAME`, else
 * `SERVICE_PROFILE` (from the environment or the `.env` file); without one no
 * profile is read. These three flags are declared on every command
 * (`command.ts`) and read here, before the command's own parsing, because
 * they say where the other flags come from.
 *
 * Values from the file and the profile are looked up, never exported: the
 * process's environment, and so a child's, gains nothing from them.
 *
 * @module
 */

import { resolve } from "node:path";
import { environmentSource, kebab, type ValueSource } from "./flags.ts";
import { readEnvFile } from "./env_file.ts";
import { checkProfileName, configDir, type Profile, readProfile } from "./profiles.ts";

/** The source-choosing flags found on a command line (before any `--`). */
export interface SourceFlags {
  /** `--profile NAME`. */
  profile?: string;
  /** `--envFile PATH`. */
  envFile?: string;
  /** `--noEnvFile`. */
  noEnvFile: boolean;
}

/** Their names; each also in lower case and kebab-case, as `parseFlags` spells them. */
const SOURCE_FLAGS = ["profile", "envFile", "noEnvFile"] as const;

/**
 * Finds `--profile`, `--envFile` and `--noEnvFile` (any spelling
 * `parseFlags` accepts) among `args`, stopping at `--`. Their full checking
 * is `parseFlags`'s, which sees the same arguments.
 *
 * @example
 * ```ts
 * scanSourceFlags(["list", "--profile=sandbox", "--", "--noEnvFile"]); // { profile: "sandbox", noEnvFile: false }
 * ```
 */
export function scanSourceFlags(args: readonly string[]): SourceFlags {
  const found: SourceFlags = { noEnvFile: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") break;
    const m = /^--([A-Za-z-]+)(?:=(.*))?$/.exec(arg);
    const spelt = m?.[1].toLowerCase();
    const key = SOURCE_FLAGS.find((n) => spelt === n.toLowerCase() || spelt === kebab(n));
    if (!m || !key) continue;
    if (key === "noEnvFile") {
      const v = m[2] ?? (/^(true|false)$/i.test(args[i + 1] ?? "") ? args[++i] : "true");
      found.noEnvFile = !/^(false|0|no|off)$/i.test(v);
    } else {
      const v = m[2] ?? args[i + 1];
      if (m[2] === undefined) i++;
      if (v !== undefined && !v.startsWith("--")) found[key] = v;
    }
  }
  return found;
}

/** What {@linkcode loadValueSources} needs from the process edge. */
export interface SourceInputs {
  /** The command's arguments (after the command name). */
  args: readonly string[];
  /** The real environment. */
  env: (name: string) => string | undefined;
  /** The current directory; without it no `.env` file is read. */
  cwd?: string;
}

/** The sources, and what was chosen (for `whoami` and messages). */
export interface LoadedSources {
  /** In precedence order after the command line. */
  sources: ValueSource[];
  /** The `.env` file that was read, if any. */
  envFile?: string;
  /** The profile in use, if any. */
  profile?: string;
}

/**
 * Builds the value sources of one run: reads the `.env` file and the profile
 * the arguments and environment choose.
 *
 * @example
 * ```ts
 * const { sources } = await loadValueSources({ args: ["--profile", "sandbox"], env: (n) => Deno.env.get(n), cwd: Deno.cwd() });
 * ```
 */
export async function loadValueSources(inputs: SourceInputs): Promise<LoadedSources> {
  const flags = scanSourceFlags(inputs.args);
  const sources: ValueSource[] = [environmentSource(inputs.env)];
  const loaded: LoadedSources = { sources };

  let fileValues: Map<string, string> | undefined;
  if (!flags.noEnvFile && (flags.envFile !== undefined || inputs.cwd !== undefined)) {
    const named = flags.envFile;
    // without a current directory, only a named file (as given)
    const path = inputs.cwd === undefined ? named! : resolve(inputs.cwd, named ?? ".env");
    fileValues = await readEnvFile(path, named !== undefined);
    if (fileValues) {
      loaded.envFile = path;
      sources.push(environmentSource((n) => fileValues!.get(n), path));
    }
  }

  const profileName = flags.profile ?? (inputs.env("SERVICE_PROFILE") || undefined) ??
    (fileValues?.get("SERVICE_PROFILE") || undefined);
  if (profileName !== undefined) {
    checkProfileName(profileName);
    const profile: Profile = await readProfile(configDir(inputs.env), profileName);
    loaded.profile = profileName;
    sources.push({
      lookup: (name) => profile[name as keyof Profile],
      describe: (name) => `--${name} (profile ${profileName})`,
    });
  }
  return loaded;
}
