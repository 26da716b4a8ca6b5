/**
 * The production addresses are a setting of the build (issue 35): the bundle that
 * `deno task compile` embeds and `deno task pack` ships, made by `scripts/bundle.ts` with
 * `SERVICE_BUILD_API_BASE_URL`/`SERVICE_BUILD_JWKS_URL` (what the release workflow sets),
 * uses them when the user gives no address — loopback servers stand in for production —
 * and says so (`whoami`: `this build (production)`); the same bundle made without them
 * assumes none (exit 2).
 *
 * @module
 */

import assert from "node:assert/strict";
import { ROOT } from "../support/main_command.ts";
import { makeTestKeys } from "../support/keys.ts";
import { json, startHostilePeer } from "../support/hostile_peer.ts";
import { LAUNCH_FLAGS, PERMISSIONS, RUNTIME_FLAGS } from "../../scripts/bundle.ts";

const keys = await makeTestKeys();
const API_KEY = "0c4d2e1f-3a5b-4c6d-8e7f-9a0b1c2d3e4f";

/** `deno run scripts/bundle.ts --output <dir>/service.js` with `env` added. */
async function makeBundle(dir: string, env: Record<string, string>): Promise<string> {
  const output = `${dir}/service.js`;
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}scripts/bundle.ts`, "--output", output],
    cwd: ROOT,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
  return output;
}

/** Runs the bundle as the npm launcher does (its flags and permissions), in a clean environment. */
async function runBundle(bundle: string, args: string[], env: Record<string, string>) {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...LAUNCH_FLAGS, ...RUNTIME_FLAGS, ...PERMISSIONS, bundle, ...args],
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: env.HOME ?? "/tmp",
      NO_COLOR: "1",
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, stdout: dec.decode(r.stdout), stderr: dec.decode(r.stderr) };
}

Deno.test("a build made with production addresses uses them when no address is given; one made without assumes none", async () => {
  const production = startHostilePeer({
    "GET /v1/vault/accounts_paged": () => json({ accounts: [], paging: {} }),
    "GET /.well-known/keys.json": () => json({ keys: [] }),
  });
  const dir = await Deno.makeTempDir();
  try {
    const creds = {
      SERVICE_API_KEY: API_KEY,
      SERVICE_API_PRIVATE_KEY_PATH: keys.pkcs8Pem,
      HOME: dir,
    };
    const jwksUrl = `${production.url}/.well-known/keys.json`;
    await Deno.mkdir(`${dir}/with`);
    const withAddresses = await makeBundle(`${dir}/with`, {
      ...Object.fromEntries(
        ["PATH", "HOME", "DENO_DIR"].flatMap((n) => Deno.env.get(n) ? [[n, Deno.env.get(n)!]] : []),
      ),
      DENO_TLS_CA_STORE: "system",
      SERVICE_BUILD_API_BASE_URL: production.url,
      SERVICE_BUILD_JWKS_URL: jwksUrl,
    });
    const who = await runBundle(withAddresses, ["whoami", "--format", "json"], creds);
    assert.equal(who.code, 0, who.stderr);
    const answer = JSON.parse(who.stdout);
    assert.equal(answer.apiBaseUrl, production.url);
    assert.equal(answer.apiBaseUrlFrom, "this build (production)");
    assert.equal(answer.environment, "production");
    assert.equal(production.hits.get("GET /v1/vault/accounts_paged"), 1);

    // the webhooks' keys: the build's JWKS when neither --jwks nor --apiBaseUrl is given
    await Deno.writeTextFile(`${dir}/body.json`, '{"id":"n1"}');
    const b64 = (s: string) => btoa(s).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
    const signature = `${b64('{"alg":"RS512","kid":"k1"}')}..${b64("x")}`;
    const verify = await runBundle(
      withAddresses,
      ["webhooks", "verify", "--body", `${dir}/body.json`, "--signature", signature],
      { HOME: dir },
    );
    assert.equal(verify.code, 1, verify.stderr);
    assert.match(verify.stderr, /unknown-kid/);
    assert.equal(production.hits.get("GET /.well-known/keys.json"), 1);

    // the same program built without them: no address, exit 2, nothing sent
    await Deno.mkdir(`${dir}/without`);
    const without = await makeBundle(`${dir}/without`, {
      ...Object.fromEntries(
        ["PATH", "HOME", "DENO_DIR"].flatMap((n) => Deno.env.get(n) ? [[n, Deno.env.get(n)!]] : []),
      ),
      DENO_TLS_CA_STORE: "system",
    });
    const none = await runBundle(without, ["whoami"], creds);
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, /No platform address: give --apiBaseUrl URL/);
    assert.equal(production.hits.get("GET /v1/vault/accounts_paged"), 1);
  } finally {
    await production.close();
    await Deno.remove(dir, { recursive: true });
  }
});
