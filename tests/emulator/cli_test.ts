/**
 * `service emulator` as a user runs it: the ready line, logs on standard
 * error without secrets, file modes of the key, clean shutdown, and the
 * usage errors (exit 2, one line). Without --rpcUrl: webhook_only_test.ts.
 */

import assert from "node:assert/strict";
import { runCli, startAnvil } from "../support/tools.ts";
import { spawnEmulator } from "../support/emulator_process.ts";

Deno.test("service emulator from the command line", async (t) => {
  const anvil = await startAnvil();
  try {
    await t.step(
      "prints exactly one ready line, logs without secrets, stops cleanly on SIGTERM",
      async () => {
        const emu = await spawnEmulator(["--rpcUrl", anvil.url, "--vaultAccounts", "3"]);
        const r = emu.ready;
        assert.equal(r.event, "ready");
        assert.match(r.apiBaseUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
        // the console's address carries its per-run token
        const consoleUrl = new URL(r.consoleUrl);
        assert.equal(`${consoleUrl.origin}${consoleUrl.pathname}`, `${r.apiBaseUrl}/console`);
        const consoleToken = consoleUrl.searchParams.get("token")!;
        assert.match(consoleToken, /^[A-Za-z0-9_-]{32}$/);
        assert.equal(r.jwksUrl, `${r.apiBaseUrl}/.well-known/jwks.json`);
        assert.match(r.apiKey, /^[0-9a-f-]{36}$/);
        const keyStat = await Deno.stat(r.privateKeyPath);
        assert.equal(keyStat.mode! & 0o777, 0o600);
        const dir = r.privateKeyPath.replace(/\/api\.pem$/, "");
        assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
        const pem = await Deno.readTextFile(r.privateKeyPath);
        const page = await fetch(r.consoleUrl);
        assert.equal(page.status, 200);
        assert.match(await page.text(), /<title>service emulator · console<\/title>/);
        // the console's overview lists the vault accounts (anvil's first one is account 0)
        const overview = await fetch(`${r.apiBaseUrl}/console/api/overview`, {
          headers: { "x-console-token": consoleToken },
        });
        assert.equal(overview.status, 200);
        assert.equal(
          (await overview.json()).accounts[0].address,
          "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        );
        const status = await emu.stop("SIGTERM");
        assert.equal(status.code, 0);
        assert.equal(emu.stdoutRest(), "");
        const err = emu.stderr();
        assert.match(err, /emulator ready/);
        assert.ok(!err.includes(r.apiKey), "the API key is not logged");
        assert.ok(!err.includes(consoleToken), "the console's token is not logged");
        assert.ok(!err.includes(pem.split("\n")[1]), "the private key is not logged");
        // the temporary key directory is removed on a clean stop
        await assert.rejects(Deno.stat(dir), Deno.errors.NotFound);
      },
    );

    await t.step("--verbose logs one line per request, without secrets", async () => {
      const emu = await spawnEmulator(["--rpcUrl", anvil.url, "--verbose"]);
      const res = await fetch(`${emu.ready.apiBaseUrl}/v1/vault/accounts_paged?limit=1`, {
        headers: { "X-API-Key": emu.ready.apiKey, Authorization: "Bearer x.y.z" },
      });
      assert.equal(res.status, 401);
      await res.body?.cancel();
      assert.equal((await emu.stop("SIGINT")).code, 0);
      assert.match(emu.stderr(), /GET \/v1\/vault\/accounts_paged -> 401/);
      assert.ok(!emu.stderr().includes(emu.ready.apiKey));
    });

    await t.step("a --chainId other than the node's exits 2", async () => {
      const r = await runCli(["emulator", "--rpcUrl", anvil.url, "--chainId", "1"]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /chain id 31337/);
      assert.equal(r.stdout, "");
    });

    await t.step("an unreachable node exits 2 and says so", async () => {
      const r = await runCli(["emulator", "--rpcUrl", "http://127.0.0.1:9"]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /Cannot reach the node/);
    });

    await t.step("a malformed fault or mnemonic exits 2", async () => {
      const f = await runCli(["emulator", "--rpcUrl", anvil.url, "--fault", "kind=nope"]);
      assert.equal(f.code, 2);
      assert.match(f.stderr, /fault/);
      const m = await runCli(["emulator", "--rpcUrl", anvil.url], {
        env: { SERVICE_EMULATOR_MNEMONIC: "not a mnemonic" },
      });
      assert.equal(m.code, 2);
      assert.match(m.stderr, /mnemonic/);
      assert.ok(!m.stderr.includes("not a mnemonic"), "the mnemonic is not echoed");
    });
  } finally {
    await anvil.stop();
  }
});
