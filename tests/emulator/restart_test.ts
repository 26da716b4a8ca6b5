/**
 * `service emulator --state FILE` as a process: SIGKILL mid-run, restart,
 * and everything acknowledged is still there — transactions, idempotency
 * records, accounts, whitelisted wallets, the API user (same key and PEM) — and transactions in
 * flight at the kill complete after the restart.
 */

import assert from "node:assert/strict";
import { startAnvil } from "../support/tools.ts";
import { claimsFor, signClaims, transfer } from "../support/emulator_fixture.ts";
import { clientForReady, spawnEmulator } from "../support/emulator_process.ts";
import type { PlatformClient } from "../../lib/platform/mod.ts";
import { waitFor } from "../support/wait_for.ts";

const ACCOUNT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

async function anvilRpc(url: string, method: string, params: unknown[] = []) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await res.json()).result;
}

async function waitStatus(
  client: PlatformClient,
  id: string,
  ok: (s: string) => boolean,
): Promise<Record<string, unknown>> {
  let data: Record<string, unknown> = {};
  return await waitFor(
    () => `transaction ${id} (stuck: ${JSON.stringify(data)})`,
    async () => {
      ({ data } = await client.request<Record<string, unknown>>("GET", `/v1/transactions/${id}`, {
        operation: "get",
      }));
      return ok(String(data.status)) ? data : undefined;
    },
    30_000,
    25,
  );
}

Deno.test(
  "a SIGKILLed emulator with --state keeps what it acknowledged and resumes",
  async () => {
    const anvil = await startAnvil();
    const dir = await Deno.makeTempDir({ prefix: "emu-restart-" });
    const state = `${dir}/emu.sqlite`;
    const args = ["--rpcUrl", anvil.url, "--state", state, "--port", "0"];
    let emu = await spawnEmulator([...args, "--vaultAccounts", "12"]);
    try {
      const asset = "ETH_TEST_31337";
      let client = await clientForReady(emu.ready);
      // acknowledged and completed
      const key = crypto.randomUUID();
      const body = transfer(asset, "0", ACCOUNT1, "0.2", { externalTxId: "before-kill" });
      const first = await client.request<{ id: string }>("POST", "/v1/transactions", {
        operation: "create",
        body,
        idempotencyKey: key,
      });
      const done = await waitStatus(client, first.data.id, (s) => s === "COMPLETED");
      // in flight: the node stops mining, so they stay CONFIRMING
      await anvilRpc(anvil.url, "evm_setAutomine", [false]);
      const inFlight: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await client.request<{ id: string }>("POST", "/v1/transactions", {
          operation: "create",
          body: transfer(asset, "1", ACCOUNT1, "0.01"),
        });
        inFlight.push(r.data.id);
      }
      for (const id of inFlight) await waitStatus(client, id, (s) => s === "CONFIRMING");
      // held for approval
      const admin = (path: string, b?: unknown) =>
        fetch(emu.ready.adminUrl + path, {
          method: "POST",
          headers: { "X-API-Key": emu.ready.apiKey, "Content-Type": "application/json" },
          body: b === undefined ? undefined : JSON.stringify(b),
        }).then(async (r) => ({ status: r.status, body: await r.text() }));
      assert.equal((await admin("/faults", { kind: "hold", count: 1 })).status, 201);
      const held = await client.request<{ id: string }>("POST", "/v1/transactions", {
        operation: "create",
        body: transfer(asset, "2", ACCOUNT1, "0.01"),
      });
      await waitStatus(client, held.data.id, (s) => s === "PENDING_AUTHORIZATION");
      // a whitelisted wallet (transactions may name it by id)
      const wallet = await admin("/wallets", {
        type: "EXTERNAL_WALLET",
        name: "Cold storage",
        address: ACCOUNT1,
      });
      assert.equal(wallet.status, 201, wallet.body);
      const walletsBefore = await client.request<unknown[]>("GET", "/v1/external_wallets", {
        operation: "list",
      });
      assert.equal(walletsBefore.data.length, 1);

      // a request seen before the kill, to replay after the restart
      const seenPath = "/v1/vault/accounts/0";
      const pem = await Deno.readTextFile(emu.ready.privateKeyPath);
      const seenToken = await signClaims(pem, await claimsFor(emu.ready.apiKey, seenPath));
      const replayOnce = async () => {
        const res = await fetch(emu.ready.apiBaseUrl + seenPath, {
          headers: { "X-API-Key": emu.ready.apiKey, Authorization: `Bearer ${seenToken}` },
        });
        return { status: res.status, body: await res.json() };
      };
      assert.equal((await replayOnce()).status, 200);

      const killed = await emu.stop("SIGKILL");
      assert.equal(killed.signal, "SIGKILL");
      const oldReady = emu.ready;
      emu = await spawnEmulator(args);
      assert.equal(emu.ready.apiKey, oldReady.apiKey);
      assert.equal(emu.ready.privateKeyPath, oldReady.privateKeyPath);
      client = await clientForReady(emu.ready);
      // the nonces seen before the kill are kept: the replay is refused
      const replayed = await replayOnce();
      assert.equal(replayed.status, 401);
      assert.match(replayed.body.message, /nonce was already used/);

      // everything acknowledged is there
      const again = await client.request<Record<string, unknown>>(
        "GET",
        `/v1/transactions/${first.data.id}`,
        { operation: "get" },
      );
      assert.deepEqual(again.data, done);
      const byExt = await client.request<{ id: string }>(
        "GET",
        "/v1/transactions/external_tx_id/before-kill",
        { operation: "get" },
      );
      assert.equal(byExt.data.id, first.data.id);
      // the idempotency record too: the replay makes nothing new
      const replay = await client.request<{ id: string }>("POST", "/v1/transactions", {
        operation: "create",
        body,
        idempotencyKey: key,
      });
      assert.equal(replay.data.id, first.data.id);
      assert.equal(replay.headers.get("idempotent-replayed"), "true");
      const accounts = await client.request<{ accounts: unknown[] }>(
        "GET",
        "/v1/vault/accounts_paged",
        { operation: "list" },
      );
      // restarted without --vaultAccounts: the 12 accounts made before are kept
      assert.equal(accounts.data.accounts.length, 12);
      // the whitelist too, ids and all
      const walletsAfter = await client.request<unknown[]>("GET", "/v1/external_wallets", {
        operation: "list",
      });
      assert.deepEqual(walletsAfter.data, walletsBefore.data);

      // in-flight ones complete once the node mines
      await anvilRpc(anvil.url, "evm_setAutomine", [true]);
      await anvilRpc(anvil.url, "evm_mine");
      for (const id of inFlight) {
        const t = await waitStatus(client, id, (s) => s === "COMPLETED" || s === "FAILED");
        assert.equal(t.status, "COMPLETED");
      }
      // the held one is still held, and continues when approved
      const h = await client.request<Record<string, unknown>>(
        "GET",
        `/v1/transactions/${held.data.id}`,
        { operation: "get" },
      );
      assert.equal(h.data.status, "PENDING_AUTHORIZATION");
      const approve = await fetch(`${emu.ready.adminUrl}/transactions/${held.data.id}/approve`, {
        method: "POST",
        headers: { "X-API-Key": emu.ready.apiKey },
      });
      assert.equal(approve.status, 200);
      await approve.body?.cancel();
      assert.equal(
        (await waitStatus(client, held.data.id, (s) => s === "COMPLETED")).status,
        "COMPLETED",
      );
      const list = await client.request<unknown[]>("GET", "/v1/transactions", {
        operation: "list",
      });
      assert.equal(list.data.length, 5);
      const stopped = await emu.stop("SIGTERM");
      assert.equal(stopped.code, 0);
    } finally {
      await emu.stop("SIGKILL").catch(() => {});
      await anvil.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
