/**
 * Profiles: named sets of connection settings (`apiKey`, `privateKey`,
 * `apiBaseUrl`) kept in the user's config directory
 * (`$XDG_CONFIG_HOME/service`, else `~/.config/service`; `%APPDATA%\service`
 * on Windows) in `profiles.json`, file mode 0600 in a 0700 directory. Like
 * ssh with a private key, a profile file that other users can read or write
 * is refused. The private key is stored as the absolute path of its file,
 * never as its text: the key stays where the user keeps it.
 *
 * @module
 */

import { CliError, ExitCode, UsageError } from "./errors.ts";

/** The settings a profile may hold, by flag name. */
export const PROFILE_KEYS = ["apiKey", "privateKey", "apiBaseUrl"] as const;

/** One profile: the connection flags it supplies. */
export type Profile = Partial<Record<(typeof PROFILE_KEYS)[number], string>>;

/** The file's content. */
export interface ProfilesFile {
  /** Profiles by name. */
  profiles: Record<string, Profile>;
}

/** The file name inside the config directory. */
export const PROFILES_FILE = "profiles.json";

/**
 * The user's config directory for `service`, from the environment; a usage error when neither
 * `XDG_CONFIG_HOME`, `HOME` nor `APPDATA` is set.
 *
 * @example
 * ```ts
 * configDir((n) => ({ HOME: "/home/ada" } as Record<string, string>)[n]); // "/home/ada/.config/service"
 * ```
 */
export function configDir(env: (name: string) => string | undefined): string {
  const xdg = env("XDG_CONFIG_HOME");
  if (xdg) return `${xdg.replace(/[\\/]+$/, "")}/service`;
  const home = env("HOME");
  if (home) return `${home.replace(/[\\/]+$/, "")}/.config/service`;
  const appData = env("APPDATA");
  if (appData) return `${appData.replace(/[\\/]+$/, "")}\\service`;
  throw new UsageError(
    "Cannot find the config directory of profiles: set HOME or XDG_CONFIG_HOME.",
  );
}

/** Checks a profile name: letters, digits, `-`, `_`, `.`; at most 64. */
export function checkProfileName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
    throw new UsageError(
      `Invalid profile name ${
        JSON.stringify(name)
      }: use letters, digits, ".", "-" and "_" (at most 64), e.g. sandbox.`,
    );
  }
  return name;
}

function tooOpen(path: string, mode: number, what: string): CliError {
  const shown = (mode & 0o777).toString(8).padStart(4, "0");
  return new CliError(
    `Refusing to use ${path}: its permissions ${shown} let other users ${what} it, and it holds API keys. Run "chmod ${
      what === "read" ? "600" : "700"
    } ${path}".`,
    ExitCode.usage,
  );
}

/**
 * Reads the profiles file of `dir`; an absent file is no profiles. A file
 * that others can read or write, or in a directory that others can write in,
 * is refused.
 *
 * @example
 * ```ts
 * const { profiles } = await readProfiles("/home/ada/.config/service");
 * ```
 */
export async function readProfiles(dir: string): Promise<ProfilesFile> {
  const path = `${dir}/${PROFILES_FILE}`;
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { profiles: {} };
    throw new CliError(`Cannot read ${path}: ${(e as Error).message}.`, ExitCode.usage);
  }
  if (info.mode !== null && (info.mode & 0o077) !== 0) throw tooOpen(path, info.mode, "read");
  // a directory others can write in lets them replace the file (with their own API base URL)
  const dirMode = (await Deno.stat(dir).catch(() => undefined))?.mode ?? null;
  if (dirMode !== null && (dirMode & 0o022) !== 0) {
    throw tooOpen(dir, dirMode, "replace the profiles file in");
  }
  const parsed: unknown = await Deno.readTextFile(path).then(JSON.parse).catch((e) => {
    throw new CliError(
      `Cannot read ${path}: ${
        e instanceof SyntaxError ? "it is not valid JSON" : e.message
      }. Fix it, or remove it and run "service config set" again.`,
      ExitCode.usage,
    );
  });
  const profiles = (parsed as { profiles?: unknown })?.profiles;
  if (typeof profiles !== "object" || profiles === null || Array.isArray(profiles)) {
    throw new CliError(
      `Cannot read ${path}: expected {"profiles": {...}}. Fix it, or remove it and run "service config set" again.`,
      ExitCode.usage,
    );
  }
  const out: Record<string, Profile> = {};
  for (const [name, p] of Object.entries(profiles as Record<string, unknown>)) {
    const profile: Profile = {};
    for (const key of PROFILE_KEYS) {
      const v = (p as Record<string, unknown> | null)?.[key];
      if (typeof v === "string" && v !== "") profile[key] = v;
    }
    out[name] = profile;
  }
  return { profiles: out };
}

/**
 * Reads one profile; a name that is not there is a usage error that says
 * how to create it.
 *
 * @example
 * ```ts
 * const sandbox = await readProfile("/home/ada/.config/service", "sandbox");
 * ```
 */
export async function readProfile(dir: string, name: string): Promise<Profile> {
  const { profiles } = await readProfiles(dir);
  if (!Object.hasOwn(profiles, name)) {
    const known = Object.keys(profiles);
    throw new UsageError(
      `No profile "${name}" in ${dir}/${PROFILES_FILE}${
        known.length ? ` (known: ${known.join(", ")})` : ""
      }. Create it with "service config set --profile ${name} --apiKey KEY --privateKey PATH".`,
    );
  }
  return profiles[name];
}

/**
 * Writes the whole profiles file: the directory is created 0700 (and made
 * 0700 if it was looser), the file is written 0600 under a temporary name
 * and renamed over the old one, so that it is never half-written nor
 * readable by others for a moment.
 *
 * @example
 * ```ts
 * await writeProfiles("/home/ada/.config/service", { profiles: { sandbox: { apiBaseUrl: "https://sandbox-api.example.io" } } });
 * ```
 */
export async function writeProfiles(dir: string, file: ProfilesFile): Promise<string> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  if (Deno.build.os !== "windows") await Deno.chmod(dir, 0o700);
  const path = `${dir}/${PROFILES_FILE}`;
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(tmp, JSON.stringify(file, null, 2) + "\n", { mode: 0o600 });
    if (Deno.build.os !== "windows") await Deno.chmod(tmp, 0o600);
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw new CliError(`Cannot write ${path}: ${(e as Error).message}.`);
  }
  return path;
}
