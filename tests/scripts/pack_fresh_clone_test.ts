/**
 * `deno task pack` on a fresh clone (no node_modules): it installs the
 * program's own npm packages (viem, zod: `npm ci --omit=dev --omit=optional`)
 * and writes the tarball; when npm cannot install them it says what to do and
 * exits 1. The clone is `git clone` of this checkout (its committed HEAD) into
 * a temporary directory. To stay fast, npm takes the packages from its cache
 * when it has them (`npm_config_prefer_offline`): about 10 s here, most of it
 * npm writing viem's files (a minute when the disk is busy). How it was seen to fail: `bundling failed` at
 * `lib/emulator/vault/whitelist.ts` (viem not installed), with no hint.
 */

import assert from "node:assert/strict";
import { ROOT } from "../support/tools.ts";
import { cleanEnv } from "../support/main_command.ts";

const VERSION = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).version;

async function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    clearEnv: true,
    env: cleanEnv(env),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

async function freshClone(): Promise<string> {
  const tmp = await Deno.makeTempDir({ prefix: "pack-clone-" });
  const r = await run("git", ["clone", "--quiet", ROOT, `${tmp}/service`], tmp);
  assert.deepEqual(r.code, 0, r.stderr);
  return `${tmp}/service`;
}

Deno.test("deno task pack on a fresh clone installs the program's packages and packs", async () => {
  const clone = await freshClone();
  try {
    const r = await run(Deno.execPath(), ["task", "--quiet", "pack"], clone, {
      npm_config_prefer_offline: "true",
    });
    assert.deepEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, /pack: installing npm packages \(npm ci --omit=dev --omit=optional\)/);
    const tarball = `${clone}/dist/service-cli-${VERSION}.tgz`;
    assert.ok((await Deno.stat(tarball)).size > 100_000, "the tarball holds the program");
    assert.match(r.stderr, new RegExp(`pack: wrote ${tarball.replaceAll(".", "\\.")}`));
    // the program's packages only: no test clients, no tools
    assert.ok(await exists(`${clone}/node_modules/viem/package.json`));
    assert.deepEqual(await exists(`${clone}/node_modules/hardhat`), false);
  } finally {
    await Deno.remove(clone.replace(/\/service$/, ""), { recursive: true });
  }
});

Deno.test("deno task pack says what to do when npm cannot install the packages", async () => {
  const clone = await freshClone();
  try {
    // offline with an empty cache: npm can fetch nothing
    const r = await run(Deno.execPath(), ["task", "--quiet", "pack"], clone, {
      npm_config_offline: "true",
      npm_config_cache: `${clone}/../empty-npm-cache`,
    });
    assert.deepEqual(r.code, 1, r.stderr);
    assert.match(r.stderr, /pack: npm could not install the packages in .*node_modules/);
    assert.match(r.stderr, /run "npm ci --omit=dev --omit=optional" in .* then run the task again/);
    assert.deepEqual(r.stderr.includes("bundling failed"), false, r.stderr);
    assert.deepEqual(await exists(`${clone}/dist/service-cli-${VERSION}.tgz`), false);
  } finally {
    await Deno.remove(clone.replace(/\/service$/, ""), { recursive: true });
  }
});

async function exists(p: string): Promise<boolean> {
  try {
    await Deno.stat(p);
    return true;
  } catch {
    return false;
  }
}
