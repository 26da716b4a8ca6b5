/**
 * Every file the emulator creates is its owner's alone, whatever the umask:
 * `service emulator --state FILE` run under umask 000 (the most permissive),
 * after writes happened (a transaction, notifications), leaves FILE,
 * FILE-wal and FILE-shm at 0600 and FILE.keys at 0700 with api.pem 0600; a
 * state left 0644 by an older version is made private again on start; an
 * in-memory emulator's temporary key directory is 0700 with api.pem 0600.
 * The WAL is checked to really hold the secrets (so its mode matters).
 *
 * How it was seen to fail: without the 0600 creation in `Store.open` the WAL
 * and SHM came out 0644 (the finding).
 */

import assert from "node:assert/strict";
import { startAnvil } from "../support/tools.ts";
import { transfer } from "../support/emulator_fixture.ts";
import { clientForReady, spawnEmulator } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";

const ACCOUNT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

function mode(path: string): string {
  return (Deno.statSync(path).mode! & 0o777).toString(8).padStart(4, "0");
}

/**
 * Spawns the emulator with the process umask at 000: the child inherits the
 * umask at spawn, and `spawnEmulator` spawns before its first `await`.
 */
function spawnUnderUmask000(args: string[]) {
  const old = Deno.umask(0);
  try {
    return spawnEmulator(args);
  } finally {
    Deno.umask(old);
  }
}

Deno.test("torture: under umask 000, --state FILE, its WAL, SHM and keys are private after writes", async () => {
  const anvil = await startAnvil();
  const dir = await Deno.makeTempDir({ prefix: "emu-modes-" });
  const state = `${dir}/emu.sqlite`;
  const args = ["--rpcUrl", anvil.url, "--state", state, "--port", "0", "--timeScale", "1000"];
  try {
    let emu = await spawnUnderUmask000(args);
    try {
      const client = await clientForReady(emu.ready);
      const { data } = await client.request<{ id: string }>("POST", "/v1/transactions", {
        operation: "create",
        body: transfer("ETH_TEST_31337", "0", ACCOUNT1, "0.01"),
      });
      await waitFor("the transaction to complete", async () => {
        const r = await client.request<{ status: string }>("GET", `/v1/transactions/${data.id}`, {
          operation: "get",
        });
        return r.data.status === "COMPLETED";
      });
      const trigger = await fetch(`${emu.ready.adminUrl}/notifications`, {
        method: "POST",
        headers: { "X-API-Key": emu.ready.apiKey, "Content-Type": "application/json" },
        body: JSON.stringify({ eventType: "transaction.created", count: 3 }),
      });
      await trigger.body?.cancel();
      assert.equal(trigger.status < 300, true, `trigger answered ${trigger.status}`);
      // the WAL really holds secrets: the API key in clear text
      const wal = await Deno.readFile(`${state}-wal`);
      assert.equal(
        new TextDecoder("latin1").decode(wal).includes(emu.ready.apiKey),
        true,
        "the WAL holds the API key (so its mode matters)",
      );
      const modes = {
        state: mode(state),
        wal: mode(`${state}-wal`),
        shm: mode(`${state}-shm`),
        keys: mode(`${state}.keys`),
        pem: mode(emu.ready.privateKeyPath),
      };
      assert.deepEqual(modes, {
        state: "0600",
        wal: "0600",
        shm: "0600",
        keys: "0700",
        pem: "0600",
      });
      assert.equal(emu.ready.privateKeyPath, `${state}.keys/api.pem`);
      await emu.kill();

      // files left readable (an older version, a copy, a umask 022 chmod) are made private on start
      for (const f of [state, `${state}-wal`, `${state}-shm`, emu.ready.privateKeyPath]) {
        await Deno.chmod(f, 0o644);
      }
      await Deno.chmod(`${state}.keys`, 0o755);
      emu = await spawnUnderUmask000(args);
      assert.deepEqual(
        [state, `${state}-wal`, `${state}-shm`, `${state}.keys`, emu.ready.privateKeyPath].map(
          mode,
        ),
        ["0600", "0600", "0600", "0700", "0600"],
      );
    } finally {
      await emu.stop();
    }
  } finally {
    await anvil.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("torture: under umask 000, an in-memory emulator's key directory is 0700, api.pem 0600, removed on stop", async () => {
  const anvil = await startAnvil();
  try {
    const emu = await spawnUnderUmask000(["--rpcUrl", anvil.url, "--port", "0"]);
    const pem = emu.ready.privateKeyPath;
    const keyDir = pem.slice(0, pem.lastIndexOf("/"));
    try {
      assert.deepEqual([mode(keyDir), mode(pem)], ["0700", "0600"]);
    } finally {
      await emu.stop();
    }
    assert.throws(() => Deno.statSync(keyDir), Deno.errors.NotFound);
  } finally {
    await anvil.stop();
  }
});
