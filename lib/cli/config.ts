/**
 * `service config <verb>`: profiles of connection settings (`profiles.ts`). The private key is
 * saved as the absolute path of its file, never its text, and the API key is never printed.
 * These verbs read their flags from the command line only, never from the environment, a
 * `.env` file or a profile: a variable in the shell is not silently saved.
 *
 * @module
 */

import { type CommandContext, connectionFlags, formatFlag, group, leaf } from "./command.ts";
import { resolve } from "node:path";
import { UsageError } from "./errors.ts";
import {
  checkProfileName,
  configDir,
  type Profile,
  PROFILES_FILE,
  readProfiles,
  writeProfiles,
} from "./profiles.ts";

function needProfile(name: string | undefined, path: string): string {
  if (name === undefined) {
    throw new UsageError(`Missing --profile: "${path}" needs the profile's name, e.g. sandbox.`);
  }
  return checkProfileName(name);
}

/** The profiles file holding `--profile NAME` (`show`, `remove`); a name not in it is a usage error. */
async function existingProfile(name: string | undefined, ctx: CommandContext & { path: string }) {
  name = needProfile(name, ctx.path);
  const dir = configDir(ctx.io.env);
  const file = await readProfiles(dir);
  if (!Object.hasOwn(file.profiles, name)) {
    throw new UsageError(`No profile "${name}" in ${dir}/${PROFILES_FILE}.`);
  }
  return { name, dir, file };
}

/** What `list`/`show` print of a profile: no secret, only whether the key is set. */
function shown(name: string, p: Profile): Record<string, unknown> {
  return {
    profile: name,
    apiBaseUrl: p.apiBaseUrl ?? "",
    apiKey: p.apiKey ? "set" : "",
    privateKey: p.privateKey ?? "",
  };
}

const setCommand = leaf({
  summary: "Save connection settings under a profile name (merged into an existing one).",
  usage: "--profile NAME [--apiKey KEY] [--privateKey PATH] [--apiBaseUrl URL]",
  description: [
    "Stored in $XDG_CONFIG_HOME/service/profiles.json (else ~/.config/service), mode 0600 in a",
    "0700 directory. The private key is stored as the absolute path of its file (checked now),",
    "never as its text. Values come from these flags only, not from the environment or .env.",
  ].join("\n"),
  flags: {
    apiKey: { ...connectionFlags.apiKey, env: undefined },
    privateKey: {
      ...connectionFlags.privateKey,
      env: undefined,
      placeholder: "PATH",
      description: "The API key's RSA private key file (its path is stored, not the key).",
    },
    apiBaseUrl: { ...connectionFlags.apiBaseUrl, env: undefined },
  },
  sources: false,
  examples: [
    "service config set --profile sandbox --apiKey KEY --privateKey ./api.pem --apiBaseUrl https://sandbox-api.example.io",
  ],
  async run({ flags: f }, ctx) {
    const name = needProfile(f.profile, ctx.path);
    const update: Profile = {};
    if (f.apiKey !== undefined) update.apiKey = f.apiKey;
    if (f.apiBaseUrl !== undefined) {
      const { normalizeBaseUrl } = await import("../platform/mod.ts");
      update.apiBaseUrl = normalizeBaseUrl(f.apiBaseUrl);
    }
    if (f.privateKey !== undefined) {
      if (f.privateKey.includes("-----BEGIN")) {
        throw new UsageError(
          "--privateKey of a profile must be the path of the key file, not the PEM text (the profile stores the path).",
        );
      }
      // absolute and normalized (`./api.pem`, `keys/../api.pem`: `/work/app/api.pem`)
      const path = ctx.cwd === undefined ? f.privateKey : resolve(ctx.cwd, f.privateKey);
      // Checked as every command will use it: a readable, unencrypted RSA key.
      const { checkPrivateKeyFile } = await import("../platform/credentials.ts");
      await checkPrivateKeyFile(path);
      update.privateKey = path;
    }
    if (Object.keys(update).length === 0) {
      throw new UsageError(
        "Nothing to save: give --apiKey, --privateKey and/or --apiBaseUrl with --profile.",
      );
    }
    const dir = configDir(ctx.io.env);
    const file = await readProfiles(dir);
    file.profiles[name] = { ...file.profiles[name], ...update };
    const path = await writeProfiles(dir, file);
    await ctx.out.log(
      `profile ${name} saved in ${path} (${
        Object.keys(update).join(", ")
      }); use it with --profile ${name} or SERVICE_PROFILE=${name}.`,
    );
    return 0;
  },
});

const COLUMNS = [
  { header: "profile", value: "profile", width: 14 },
  { header: "apiKey", value: "apiKey", width: 6 },
  { header: "apiBaseUrl", value: "apiBaseUrl", width: 36 },
  { header: "privateKey", value: "privateKey" },
];

const listCommand = leaf({
  summary: "List the profiles (the API key is never printed, only whether it is set).",
  usage: "[--format table|json|ndjson]",
  flags: { ...formatFlag },
  sources: false,
  examples: ["service config list --format json"],
  async run(_p, ctx) {
    const { profiles } = await readProfiles(configDir(ctx.io.env));
    await ctx.out.records(Object.entries(profiles).map(([n, p]) => shown(n, p)), COLUMNS, {
      empty: "no profiles (service config set --profile NAME ... saves one)",
    });
    return 0;
  },
});

const showCommand = leaf({
  summary: "Show one profile (the API key is never printed, only whether it is set).",
  usage: "--profile NAME [--format table|json|ndjson]",
  flags: { ...formatFlag },
  sources: false,
  examples: ["service config show --profile sandbox"],
  async run({ flags: f }, ctx) {
    const { name, file } = await existingProfile(f.profile, ctx);
    await ctx.out.object(shown(name, file.profiles[name]));
    return 0;
  },
});

const removeCommand = leaf({
  summary: "Remove a profile.",
  usage: "--profile NAME",
  flags: {},
  sources: false,
  examples: ["service config remove --profile sandbox"],
  async run({ flags: f }, ctx) {
    const { name, dir, file } = await existingProfile(f.profile, ctx);
    delete file.profiles[name];
    await writeProfiles(dir, file);
    await ctx.out.log(`profile ${name} removed.`);
    return 0;
  },
});

/** `service config`. */
export const configCommand = group(
  "Profiles of connection settings: set, list, show, remove.",
  { set: setCommand, list: listCommand, show: showCommand, remove: removeCommand },
  { description: "Use a profile with --profile NAME or SERVICE_PROFILE=NAME on any command." },
);
