/**
 * `service config set|list|show|remove` and `service whoami`, run as a user
 * runs them (`main.ts` as a process, a HOME and a working directory of the
 * test's own), against a real emulator on a real anvil: profiles are stored
 * 0600 and never printed with their API key; `--profile` and
 * `SERVICE_PROFILE` feed any command; flags, the environment and `.env` win
 * over the profile; whoami says which environment answered, and exits 3 for
 * refused credentials.
 */
import assert from "node:assert/strict";
import { runCli, startAnvil } from "../support/tools.ts";
import { startEmulator } from "../../lib/emulator/mod.ts";

type Emu = Awaited<ReturnType<typeof startEmulator>>;
let anvil: Awaited<ReturnType<typeof startAnvil>>;
let emu: Emu;
let home: string;

Deno.test.beforeAll(async () => {
  anvil = await startAnvil();
  emu = await startEmulator({ rpcUrl: anvil.url, log: () => {} });
  home = await Deno.makeTempDir({ prefix: "service-home-" });
});

Deno.test.afterAll(async () => {
  await emu?.stop();
  await anvil?.stop();
  await Deno.remove(home, { recursive: true }).catch(() => {});
});

/** Runs `service ...args` in `cwd` with HOME = the test's home and nothing else of ours. */
function service(args: string[], cwd: string, env: Record<string, string> = {}) {
  return runCli(args, { cwd, env: { HOME: home, ...env } });
}

Deno.test("config set stores the key file's path 0600, list/show never print the API key, whoami uses the profile and names the environment", async () => {
  const work = await Deno.makeTempDir({ dir: home, prefix: "proj-" });
  const keyCopy = `${work}/api.pem`;
  await Deno.copyFile(emu.privateKeyPath, keyCopy);
  const set = await service([
    "config",
    "set",
    "--profile",
    "local",
    "--apiKey",
    emu.apiKey,
    "--privateKey",
    "./api.pem", // relative: stored as an absolute, normalized path (not `${work}/./api.pem`)
    "--apiBaseUrl",
    emu.apiBaseUrl,
  ], work);
  assert.equal(set.code, 0, set.stderr);
  assert.ok(!(set.stdout + set.stderr).includes(emu.apiKey));
  const file = `${home}/.config/service/profiles.json`;
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
  assert.equal((await Deno.stat(`${home}/.config/service`)).mode! & 0o777, 0o700);
  const stored = JSON.parse(await Deno.readTextFile(file));
  assert.equal(stored.profiles.local.privateKey, keyCopy);
  assert.ok(!JSON.stringify(stored).includes("BEGIN"), "the key itself is not copied");

  for (const args of [["config", "list"], ["config", "show", "--profile", "local"]]) {
    const r = await service([...args, "--format", "json"], work);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!(r.stdout + r.stderr).includes(emu.apiKey), r.stdout);
    assert.match(r.stdout, /"apiKey": "set"/);
    assert.match(r.stdout, new RegExp(`"privateKey": "${keyCopy}"`));
  }

  const who = await service(["whoami", "--profile", "local", "--format", "json"], home);
  assert.equal(who.code, 0, who.stderr);
  const answer = JSON.parse(who.stdout);
  assert.deepEqual(answer, {
    ok: true,
    environment: "local",
    apiBaseUrl: emu.apiBaseUrl.replace(/\/v1\/?$/, ""),
    apiBaseUrlFrom: "--apiBaseUrl (profile local)",
    profile: "local",
    apiKeyFrom: "--apiKey (profile local)",
  });
  assert.ok(!(who.stdout + who.stderr).includes(emu.apiKey));

  // SERVICE_PROFILE works as --profile does
  const byVar = await service(["whoami", "--format", "table"], home, { SERVICE_PROFILE: "local" });
  assert.equal(byVar.code, 0, byVar.stderr);
  assert.match(byVar.stdout, /environment:\s+local/);

  // the environment wins over the profile: a wrong key from the environment is refused (exit 3)
  const refused = await service(["whoami", "--profile", "local"], home, {
    SERVICE_API_KEY: "0e4b9c1a-0000-4000-8000-000000000000",
  });
  assert.equal(refused.code, 3, refused.stderr);
  // and a flag wins over both
  const flagWins = await service(
    [
      "whoami",
      "--profile",
      "local",
      "--apiKey",
      emu.apiKey,
      "--format",
      "table",
    ],
    home,
    {
      SERVICE_API_KEY: "0e4b9c1a-0000-4000-8000-000000000000",
    },
  );
  assert.equal(flagWins.code, 0, flagWins.stderr);
  assert.match(flagWins.stdout, /apiKeyFrom:\s+--apiKey$/m);

  // .env (in its own directory) wins over the profile: a base URL nobody answers
  await Deno.writeTextFile(`${work}/.env`, "SERVICE_API_BASE_URL=http://127.0.0.1:9\n");
  const dotenv = await service(["whoami", "--profile", "local", "--retries", "0"], work);
  assert.equal(dotenv.code, 6, dotenv.stderr);
  assert.match(dotenv.stderr, /127\.0\.0\.1:9/);
  const skipped = await service(["whoami", "--profile", "local", "--noEnvFile"], work);
  assert.equal(skipped.code, 0, skipped.stderr);

  const removed = await service(["config", "remove", "--profile", "local"], work);
  assert.equal(removed.code, 0, removed.stderr);
  const gone = await service(["whoami", "--profile", "local"], home);
  assert.equal(gone.code, 2);
  assert.match(gone.stderr, /No profile "local"/);
});

Deno.test("config set refuses PEM text, an unreadable key, nothing to save; config verbs ignore SERVICE_API_KEY", async () => {
  const work = await Deno.makeTempDir({ dir: home, prefix: "proj-" });
  const pem = await Deno.readTextFile(emu.privateKeyPath);
  const text = await service(["config", "set", "--profile", "x", "--privateKey", pem], work);
  assert.equal(text.code, 2);
  assert.match(text.stderr, /must be the path of the key file, not the PEM text/);
  assert.ok(!text.stderr.includes("PRIVATE KEY-----\n"), "the key is not echoed");
  const missing = await service(
    ["config", "set", "--profile", "x", "--privateKey", "no.pem"],
    work,
  );
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, /no\.pem/);
  const nothing = await service(["config", "set", "--profile", "x"], work, {
    SERVICE_API_KEY: "from-the-shell",
  });
  assert.equal(nothing.code, 2);
  assert.match(nothing.stderr, /Nothing to save/);
  const noName = await service(["config", "set", "--apiKey", "k"], work);
  assert.equal(noName.code, 2);
  assert.match(noName.stderr, /Missing --profile/);
});

Deno.test("whoami without credentials is exit 2 and names what is missing", async () => {
  const r = await service(["whoami"], home);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /Missing credentials: --apiKey/);
});

Deno.test("whoami without a profile prints no profile field", async () => {
  const r = await service(["whoami", "--format", "json"], home, {
    SERVICE_API_KEY: emu.apiKey,
    SERVICE_API_PRIVATE_KEY_PATH: emu.privateKeyPath,
    SERVICE_API_BASE_URL: emu.apiBaseUrl,
  });
  assert.equal(r.code, 0, r.stderr);
  const answer = JSON.parse(r.stdout);
  assert.equal("profile" in answer, false, r.stdout);
  assert.equal(answer.apiKeyFrom, "SERVICE_API_KEY (environment)");
});
