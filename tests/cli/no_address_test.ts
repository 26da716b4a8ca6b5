/**
 * No address of our own (issue 35): a build without production addresses never assumes
 * one. Each command family, given credentials but no `--apiBaseUrl`, variable or profile,
 * exits 2 naming what to set, before any network use: the child runs without network
 * permission at all, so any attempt would end otherwise. With an address from a flag, a
 * variable or a profile it works as before, and `whoami` says where the address came from.
 * (A build that carries production addresses: tests/package/production_build_test.ts.)
 *
 * @module
 */

import assert from "node:assert/strict";
import { mainCommand, ROOT } from "../support/main_command.ts";
import { makeTestKeys } from "../support/keys.ts";
import { json, startHostilePeer } from "../support/hostile_peer.ts";

const keys = await makeTestKeys();
const API_KEY = "5e0b3c1d-2a4f-4b6e-8c7d-9f0a1b2c3d4e";

/** Runs `service args`; `net: false` runs it without any network permission. */
async function service(
  args: string[],
  env: Record<string, string>,
  net = false,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const program = [
    "run",
    ...(net ? ["-A"] : ["--allow-read", "--allow-write", "--allow-env", "--allow-run"]),
    `${ROOT}main.ts`,
  ];
  const out = await mainCommand(args, { env, program }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

const creds = { SERVICE_API_KEY: API_KEY, SERVICE_API_PRIVATE_KEY_PATH: keys.pkcs8Pem };

const FAMILIES: [string, string[]][] = [
  ["whoami", ["whoami"]],
  ["notifications", ["notifications", "list", "--webhookId", "w1"]],
  ["webhooks", ["webhooks", "list"]],
  ["rpc", ["rpc", "--rpcUrl", "http://127.0.0.1:9", "--chainId", "31337", "--", "true"]],
  ["breaker --webhookId", ["breaker", "simulate", "--webhookId", "w1", "--from", "1h"]],
];

for (const [family, args] of FAMILIES) {
  Deno.test(`${family} with credentials but no address exits 2 before any network use, naming what to set`, async () => {
    const r = await service(args, { ...creds, HOME: await Deno.makeTempDir() });
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^error: No platform address: give --apiBaseUrl URL, set SERVICE_API_BASE_URL, or save one in a profile \(service config set --profile NAME --apiBaseUrl URL\); this build carries no production address\.\n$/,
    );
  });
}

Deno.test("webhooks verify and listen without --jwks or --apiBaseUrl exit 2 naming what to give", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/body.json`, "{}");
    for (
      const args of [
        ["webhooks", "verify", "--body", `${dir}/body.json`, "--signature", "a..b"],
        ["webhooks", "listen", "--port", "0"],
      ]
    ) {
      const r = await service(args, { HOME: dir });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /No keys to check signatures against: give --jwks URL\|FILE/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("with an address from a flag, a variable or a profile whoami works and says where it came from", async () => {
  const peer = startHostilePeer({
    "GET /v1/vault/accounts_paged": () => json({ accounts: [], paging: {} }),
  });
  const home = await Deno.makeTempDir();
  try {
    const env = { ...creds, HOME: home };
    const flag = await service(["whoami", "--apiBaseUrl", peer.url, "--format", "json"], env, true);
    assert.equal(flag.code, 0, flag.stderr);
    assert.equal(JSON.parse(flag.stdout).apiBaseUrlFrom, "--apiBaseUrl");
    const variable = await service(
      ["whoami", "--format", "json"],
      { ...env, SERVICE_API_BASE_URL: peer.url },
      true,
    );
    assert.equal(variable.code, 0, variable.stderr);
    assert.equal(JSON.parse(variable.stdout).apiBaseUrlFrom, "SERVICE_API_BASE_URL (environment)");
    const set = await service(
      ["config", "set", "--profile", "p", "--apiBaseUrl", peer.url],
      env,
    );
    assert.equal(set.code, 0, set.stderr);
    const profile = await service(["whoami", "--profile", "p", "--format", "json"], env, true);
    assert.equal(profile.code, 0, profile.stderr);
    const answer = JSON.parse(profile.stdout);
    assert.equal(answer.apiBaseUrl, peer.url);
    assert.equal(answer.apiBaseUrlFrom, "--apiBaseUrl (profile p)");
    assert.equal(answer.environment, "local");
    assert.equal(peer.hits.get("GET /v1/vault/accounts_paged"), 3);
  } finally {
    await peer.close();
    await Deno.remove(home, { recursive: true });
  }
});
