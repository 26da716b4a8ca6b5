/**
 * Where a flag's value comes from (lib/cli/config_sources.ts, flags.ts):
 * command line > environment > `.env` > profile > default, with real files
 * in a directory of the test's own (a `.env`, a profiles file under
 * XDG_CONFIG_HOME) and the real loader; `.env` parsing; the profile file's
 * permission rule; booleans followed by true/false.
 */
import assert from "node:assert/strict";
import { type FlagSpecs, parseFlags } from "../../lib/cli/flags.ts";
import { loadValueSources, scanSourceFlags } from "../../lib/cli/config_sources.ts";
import { parseEnvFile } from "../../lib/cli/env_file.ts";
import { configDir, readProfiles, writeProfiles } from "../../lib/cli/profiles.ts";
import { run } from "../../lib/cli/mod.ts";
import { commonFlags } from "../../lib/cli/command.ts";
import { memoryIo } from "../support/memory_io.ts";

const SPECS = {
  ...commonFlags,
  apiKey: { type: "string", env: "SERVICE_API_KEY", secret: true, description: "" },
  apiBaseUrl: { type: "string", env: "SERVICE_API_BASE_URL", description: "" },
  privateKey: { type: "string", env: "SERVICE_API_PRIVATE_KEY_PATH", description: "" },
  note: { type: "string", env: "SERVICE_NOTE", default: "dflt", description: "" },
  quiet: { type: "boolean", env: "SERVICE_QUIET", description: "" },
  port: { type: "integer", env: "SERVICE_PORT", min: 0, max: 65535, description: "" },
  secretNumber: {
    type: "integer",
    env: "SERVICE_SECRET_NUMBER",
    secret: true,
    min: 0,
    max: 9,
    description: "",
  },
} as const satisfies FlagSpecs;

async function workspace(): Promise<{ dir: string; config: string; cleanup(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "sources-" });
  const config = `${dir}/xdg`;
  return { dir, config, cleanup: () => Deno.remove(dir, { recursive: true }) };
}

async function parse(
  args: string[],
  env: Record<string, string>,
  cwd: string,
) {
  const loaded = await loadValueSources({ args, env: (n) => env[n], cwd });
  return { loaded, ...parseFlags(SPECS, args, { command: "t", sources: loaded.sources }) };
}

Deno.test("precedence: command line > environment > .env > profile > default, for each layer", async () => {
  const w = await workspace();
  try {
    await writeProfiles(`${w.config}/service`, {
      profiles: {
        sb: { apiKey: "from-profile", apiBaseUrl: "http://profile", privateKey: "/p.pem" },
      },
    });
    await Deno.writeTextFile(
      `${w.dir}/.env`,
      "SERVICE_API_KEY=from-dotenv\nSERVICE_API_BASE_URL=http://dotenv\n",
    );
    const env = { XDG_CONFIG_HOME: w.config, SERVICE_API_KEY: "from-env" };
    const all = await parse(["--profile", "sb"], env, w.dir);
    assert.equal(all.flags.apiKey, "from-env"); // environment beats .env and profile
    assert.equal(all.flags.apiBaseUrl, "http://dotenv"); // .env beats profile
    assert.equal(all.flags.privateKey, "/p.pem"); // profile beats nothing
    assert.equal(all.flags.note, "dflt"); // default last
    assert.equal(all.origins.get("apiKey"), "SERVICE_API_KEY (environment)");
    assert.equal(all.origins.get("apiBaseUrl"), `SERVICE_API_BASE_URL (${w.dir}/.env)`);
    assert.equal(all.origins.get("privateKey"), "--privateKey (profile sb)");
    const flag = await parse(["--profile", "sb", "--apiKey", "from-flag"], env, w.dir);
    assert.equal(flag.flags.apiKey, "from-flag"); // the command line beats everything
    assert.equal(flag.origins.has("apiKey"), false);
    // SERVICE_PROFILE chooses the profile when --profile is absent
    const byVar = await parse([], { XDG_CONFIG_HOME: w.config, SERVICE_PROFILE: "sb" }, w.dir);
    assert.equal(byVar.flags.privateKey, "/p.pem");
    assert.equal(byVar.loaded.profile, "sb");
    // without a profile, none is read
    const none = await parse([], { XDG_CONFIG_HOME: w.config }, w.dir);
    assert.equal(none.flags.privateKey, undefined);
    assert.equal(none.loaded.profile, undefined);
  } finally {
    await w.cleanup();
  }
});

Deno.test("--noEnvFile skips ./.env; --envFile PATH (relative to the current directory) replaces it; a missing named file is exit 2", async () => {
  const w = await workspace();
  try {
    await Deno.writeTextFile(`${w.dir}/.env`, "SERVICE_NOTE=dot\n");
    await Deno.mkdir(`${w.dir}/conf`);
    await Deno.writeTextFile(`${w.dir}/conf/ci.env`, "SERVICE_NOTE=named\n");
    assert.equal((await parse([], {}, w.dir)).flags.note, "dot");
    assert.equal((await parse(["--noEnvFile"], {}, w.dir)).flags.note, "dflt");
    assert.equal((await parse(["--noEnvFile", "false"], {}, w.dir)).flags.note, "dot");
    assert.equal((await parse(["--envFile", "conf/ci.env"], {}, w.dir)).flags.note, "named");
    assert.equal((await parse(["--env-file=conf/ci.env"], {}, w.dir)).flags.note, "named");
    await assert.rejects(
      () => parse(["--envFile", "conf/nope.env"], {}, w.dir),
      /Cannot read the env file .*conf\/nope\.env: no such file\. Check --envFile\./,
    );
    // a source flag after "--" belongs to the child
    assert.deepEqual(scanSourceFlags(["--", "--noEnvFile", "--profile", "x"]), {
      noEnvFile: false,
    });
  } finally {
    await w.cleanup();
  }
});

Deno.test("a bad value from .env names the variable and the file, and a secret's value is never shown", async () => {
  const w = await workspace();
  try {
    await Deno.writeTextFile(
      `${w.dir}/.env`,
      "SERVICE_PORT=eighty\nSERVICE_SECRET_NUMBER=hunter2\n",
    );
    const err = await parse([], {}, w.dir).then(() => undefined, (e: Error) => e);
    assert.match(
      String(err?.message),
      /"eighty" for SERVICE_PORT \(.*\/\.env\): expected a whole number/,
    );
    await Deno.writeTextFile(`${w.dir}/.env`, "SERVICE_SECRET_NUMBER=hunter2\n");
    const secret = await parse([], {}, w.dir).then(() => undefined, (e: Error) => e);
    assert.match(String(secret?.message), /SERVICE_SECRET_NUMBER/);
    assert.ok(!String(secret?.message).includes("hunter2"), String(secret?.message));
    // a malformed line names the line, not its text
    await Deno.writeTextFile(`${w.dir}/.env`, "SERVICE_NOTE=ok\nthis is sk_live_secret\n");
    const line = await parse([], {}, w.dir).then(() => undefined, (e: Error) => e);
    assert.match(String(line?.message), /\.env, line 2: expected KEY=value/);
    assert.ok(!String(line?.message).includes("sk_live_secret"));
  } finally {
    await w.cleanup();
  }
});

Deno.test("parseEnvFile: comments, export, quotes, escapes, inline comments, CRLF", () => {
  const v = parseEnvFile(
    [
      "# a comment",
      "",
      "export SERVICE_A=1",
      'SERVICE_B="two words # not a comment"',
      "SERVICE_C='lit\\n $X'",
      'SERVICE_D="line\\nbreak"',
      "SERVICE_E=plain # comment",
      "SERVICE_F=",
      "SERVICE_G = spaced\r",
    ].join("\n"),
    ".env",
  );
  assert.deepEqual(Object.fromEntries(v), {
    SERVICE_A: "1",
    SERVICE_B: "two words # not a comment",
    SERVICE_C: "lit\\n $X",
    SERVICE_D: "line\nbreak",
    SERVICE_E: "plain",
    SERVICE_F: "",
    SERVICE_G: "spaced",
  });
  assert.throws(() => parseEnvFile('SERVICE_X="open', ".env"), /line 1: the quoted value/);
});

Deno.test("profiles: written 0600 in a 0700 directory; a file others can read is refused like ssh does; an unknown profile says how to create it", async () => {
  const w = await workspace();
  try {
    const dir = `${w.config}/service`;
    await writeProfiles(dir, { profiles: { sb: { apiKey: "k" } } });
    assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
    assert.equal((await Deno.stat(`${dir}/profiles.json`)).mode! & 0o777, 0o600);
    assert.deepEqual(await readProfiles(dir), { profiles: { sb: { apiKey: "k" } } });
    await Deno.chmod(`${dir}/profiles.json`, 0o644);
    await assert.rejects(
      () => readProfiles(dir),
      /Refusing to use .*profiles\.json: its permissions 0644 let other users read it.*chmod 600/,
    );
    await Deno.chmod(`${dir}/profiles.json`, 0o600);
    await assert.rejects(
      () => parse(["--profile", "prod"], { XDG_CONFIG_HOME: w.config }, w.dir),
      /No profile "prod" in .*\(known: sb\)\. Create it with "service config set --profile prod/,
    );
    await assert.rejects(
      () => parse(["--profile", "../x"], { XDG_CONFIG_HOME: w.config }, w.dir),
      /Invalid profile name "\.\.\/x"/,
    );
    assert.equal(
      configDir((n) => ({ HOME: "/h" } as Record<string, string>)[n]),
      "/h/.config/service",
    );
    assert.equal(
      configDir((n) => ({ HOME: "/h", XDG_CONFIG_HOME: "/x/" } as Record<string, string>)[n]),
      "/x/service",
    );
  } finally {
    await w.cleanup();
  }
});

Deno.test("booleans: --x false and --x true take the next word; any other word stays a positional", () => {
  const specs = { quiet: { type: "boolean", description: "" } } as const satisfies FlagSpecs;
  const p = (a: string[]) => parseFlags(specs, a, { command: "t" });
  assert.equal(p(["--quiet", "false"]).flags.quiet, false);
  assert.equal(p(["--quiet", "FALSE"]).flags.quiet, false);
  assert.equal(p(["--quiet", "true"]).flags.quiet, true);
  assert.equal(p(["--quiet=false"]).flags.quiet, false);
  const other = p(["--quiet", "file.txt"]);
  assert.equal(other.flags.quiet, true);
  assert.deepEqual(other.positionals, ["file.txt"]);
});

Deno.test("every command accepts --profile, --envFile and --noEnvFile, and SERVICE_VERBOSE", async () => {
  const w = await workspace();
  try {
    // breaker simulate on a missing file fails after flag parsing: the source flags were accepted
    for (
      const args of [
        ["breaker", "simulate", "nope.ndjson", "--noEnvFile"],
        ["breaker", "simulate", "nope.ndjson", "--envFile", ".env.test"],
      ]
    ) {
      await Deno.writeTextFile(`${w.dir}/.env.test`, "");
      const io = memoryIo();
      const code = await run(args, { io, cwd: w.dir });
      assert.doesNotMatch(io.err(), /Unknown flag/, io.err());
      assert.notEqual(code, 0);
    }
    const io = memoryIo("", { SERVICE_PROFILE: "missing", XDG_CONFIG_HOME: w.config });
    assert.equal(await run(["webhooks", "list"], { io, cwd: w.dir }), 2);
    assert.match(io.err(), /No profile "missing"/);
  } finally {
    await w.cleanup();
  }
});
