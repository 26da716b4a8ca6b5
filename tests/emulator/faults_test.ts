/**
 * Fault injection, each kind observed by a real client (the project's
 * platform client, or fetch): injected 5xx and 429 + Retry-After, latency,
 * a POST that is committed and then answered by a dropped connection,
 * held transactions approved or rejected through the admin endpoint, and
 * forced final statuses.
 */

import assert from "node:assert/strict";
import { createPublicClient, http } from "viem";
import {
  loadCredentials,
  PlatformApiError,
  PlatformClient,
  PlatformTimeoutError,
} from "../../lib/platform/mod.ts";
import {
  claimsFor,
  type Fixture,
  signClaims,
  startFixture,
  transfer,
} from "../support/emulator_fixture.ts";

const ACCOUNT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const ACCOUNT8 = "0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f";

async function clientFor(fx: Fixture, o: ConstructorParameters<typeof PlatformClient>[1]) {
  return new PlatformClient(
    await loadCredentials({
      apiKey: fx.emu.apiKey,
      privateKey: fx.emu.privateKeyPem,
      apiBaseUrl: fx.emu.apiBaseUrl,
    }),
    o,
  );
}

async function countTransactions(fx: Fixture): Promise<number> {
  return (await fx.api<unknown[]>("GET", "/v1/transactions")).data.length;
}

Deno.test("fault injection", async (t) => {
  const fx = await startFixture({ faults: ["kind=status,status=500,count=1,path=/v1/vault/*"] });
  const chain = createPublicClient({ transport: http(fx.anvil.url) });
  const asset = fx.emu.assetId;
  try {
    await t.step("a fault given at start answers the first matching request with 500", async () => {
      const first = await fx.api("GET", "/v1/vault/accounts/0");
      assert.equal(first.status, 500);
      assert.equal(typeof first.data.code, "number");
      assert.equal((await fx.api("GET", "/v1/vault/accounts/0")).status, 200);
    });

    await t.step("the admin endpoint needs the API key", async () => {
      const res = await fetch(fx.emu.adminUrl + "/faults");
      assert.equal(res.status, 401);
      await res.body?.cancel();
      const bad = await fx.admin("POST", "/faults", { kind: "status", status: 200 });
      assert.equal(bad.status, 400);
    });

    await t.step("N injected 503s are retried through by the platform client", async () => {
      const added = await fx.admin("POST", "/faults", {
        kind: "status",
        status: 503,
        count: 2,
        path: "/v1/vault/accounts_paged",
      });
      assert.equal(added.status, 201);
      const retries: string[] = [];
      const client = await clientFor(fx, {
        retries: 3,
        backoffMs: 1,
        onRetry: (i) => retries.push(i.reason),
      });
      const r = await client.request("GET", "/v1/vault/accounts_paged", { operation: "list" });
      assert.equal(r.status, 200);
      assert.deepEqual(retries, ["status 503", "status 503"]);
      assert.deepEqual((await fx.admin("GET", "/faults")).data.faults, []);
    });

    await t.step("an injected 429 carries Retry-After, which the client honours", async () => {
      await fx.admin("POST", "/faults", {
        kind: "status",
        status: 429,
        retryAfter: 2,
        path: "/v1/vault/accounts/*",
      });
      const waits: number[] = [];
      const client = await clientFor(fx, {
        retries: 2,
        sleep: (ms) => {
          waits.push(ms);
          return Promise.resolve();
        },
      });
      const r = await client.request("GET", "/v1/vault/accounts/1", { operation: "get" });
      assert.equal(r.status, 200);
      assert.deepEqual(waits, [2000]);
      const noRetry = await clientFor(fx, { retries: 0 });
      await fx.admin("POST", "/faults", { kind: "status", status: 429, retryAfter: 1 });
      await assert.rejects(
        noRetry.request("GET", "/v1/vault/accounts/1", { operation: "get" }),
        (e) => e instanceof PlatformApiError && e.status === 429 && e.retryAfterMs === 1000,
      );
    });

    await t.step("injected latency makes a client with a short timeout give up", async () => {
      const added = await fx.admin("POST", "/faults", {
        kind: "latency",
        ms: 1500,
        count: 1,
        path: "/v1/vault/accounts/2",
      });
      const client = await clientFor(fx, { retries: 0, timeoutMs: 200 });
      await assert.rejects(
        client.request("GET", "/v1/vault/accounts/2", { operation: "get" }),
        PlatformTimeoutError,
      );
      assert.equal(added.status, 201);
      // the rule was used once and is gone
      assert.equal((await fx.api("GET", "/v1/vault/accounts/2")).status, 200);
    });

    await t.step(
      "a dropped POST is committed but the client sees a connection error, not a response",
      async () => {
        await fx.admin("POST", "/faults", { kind: "drop", path: "/v1/transactions", count: 1 });
        const before = await countTransactions(fx);
        const body = JSON.stringify(transfer(asset, "5", ACCOUNT1, "0.01"));
        const token = await signClaims(
          fx.emu.privateKeyPem,
          await claimsFor(fx.emu.apiKey, "/v1/transactions", body),
        );
        await assert.rejects(
          fetch(fx.emu.apiBaseUrl + "/v1/transactions", {
            method: "POST",
            headers: {
              "X-API-Key": fx.emu.apiKey,
              Authorization: `Bearer ${token}`,
              "Content-Type": "application/json",
            },
            body,
          }),
          TypeError,
        );
        assert.equal(await countTransactions(fx), before + 1);
      },
    );

    await t.step(
      "a client retrying a dropped POST with its Idempotency-Key makes one transaction",
      async () => {
        await fx.admin("POST", "/faults", { kind: "drop", path: "/v1/transactions", count: 1 });
        const before = await countTransactions(fx);
        const nonce = await chain.getTransactionCount({ address: ACCOUNT8 });
        const reasons: string[] = [];
        const client = await clientFor(fx, {
          retries: 2,
          backoffMs: 1,
          onRetry: (i) => reasons.push(i.reason),
        });
        const r = await client.request<{ id: string }>("POST", "/v1/transactions", {
          operation: "create",
          body: transfer(asset, "8", ACCOUNT1, "0.01"),
        });
        assert.deepEqual(reasons, ["network error"]);
        assert.equal(r.headers.get("idempotent-replayed"), "true");
        assert.equal(await countTransactions(fx), before + 1);
        assert.equal((await fx.waitTx(r.data.id)).status, "COMPLETED");
        assert.equal(await chain.getTransactionCount({ address: ACCOUNT8 }), nonce + 1);
      },
    );

    await t.step("curl sees an empty reply (no status line) from a dropped request", async () => {
      await fx.admin("POST", "/faults", {
        kind: "drop",
        method: "GET",
        path: "/v1/vault/accounts/3",
      });
      const path = "/v1/vault/accounts/3";
      const token = await signClaims(fx.emu.privateKeyPem, await claimsFor(fx.emu.apiKey, path));
      // headers through a file, not argv: the key stays out of the process list
      const headers = await Deno.makeTempFile();
      await Deno.writeTextFile(
        headers,
        `X-API-Key: ${fx.emu.apiKey}\nAuthorization: Bearer ${token}\n`,
      );
      try {
        const out = await new Deno.Command("curl", {
          args: ["-sS", "-m", "10", "-H", `@${headers}`, fx.emu.apiBaseUrl + path],
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.equal(out.code, 52, new TextDecoder().decode(out.stderr));
        assert.match(new TextDecoder().decode(out.stderr), /Empty reply/);
      } finally {
        await Deno.remove(headers);
      }
      assert.equal((await fx.api("GET", path)).status, 200);
    });

    await t.step("a held transaction waits in PENDING_AUTHORIZATION until approved", async () => {
      await fx.admin("POST", "/faults", { kind: "hold", count: 1 });
      const r = await fx.api("POST", "/v1/transactions", {
        body: transfer(asset, "6", ACCOUNT1, "0.01"),
      });
      const id = r.data.id as string;
      await fx.waitTx(id, (t) => t.status === "PENDING_AUTHORIZATION");
      // it stays there: a transaction created after it, not held, goes all the way through
      const later = await fx.api("POST", "/v1/transactions", {
        body: transfer(asset, "5", ACCOUNT1, "0.01"),
      });
      assert.equal((await fx.waitTx(later.data.id as string)).status, "COMPLETED");
      assert.equal(
        (await fx.api("GET", `/v1/transactions/${id}`)).data.status,
        "PENDING_AUTHORIZATION",
      );
      const approved = await fx.admin("POST", `/transactions/${id}/approve`);
      assert.equal(approved.status, 200);
      assert.equal((await fx.waitTx(id)).status, "COMPLETED");
    });

    await t.step(
      "a held transaction rejected through admin ends REJECTED and never reaches the chain",
      async () => {
        const address = "0x976EA74026E726554dB657fA54763abd0C3a0aa9"; // account 6
        const nonce = await chain.getTransactionCount({ address });
        await fx.admin("POST", "/faults", { kind: "hold" });
        const ids: string[] = [];
        for (let i = 0; i < 2; i++) {
          const r = await fx.api("POST", "/v1/transactions", {
            body: transfer(asset, "6", ACCOUNT1, "0.01"),
          });
          ids.push(r.data.id as string);
          await fx.waitTx(ids[i], (t) => t.status === "PENDING_AUTHORIZATION");
        }
        assert.equal((await fx.admin("POST", `/transactions/${ids[0]}/reject`)).status, 200);
        const forced = await fx.admin("POST", `/transactions/${ids[1]}/status`, {
          status: "TIMEOUT",
        });
        assert.equal(forced.data.status, "TIMEOUT");
        const rejected = await fx.waitTx(ids[0]);
        assert.equal(rejected.status, "REJECTED");
        assert.equal(rejected.subStatus, "REJECTED_BY_USER");
        assert.equal((await fx.waitTx(ids[1])).status, "TIMEOUT");
        assert.equal((await fx.admin("POST", `/transactions/${ids[1]}/approve`)).status, 400);
        assert.equal(await chain.getTransactionCount({ address }), nonce);
        await fx.admin("DELETE", "/faults");
      },
    );

    await t.step("a finalStatus fault ends the next transactions BLOCKED / CANCELLED", async () => {
      await fx.admin("POST", "/faults", { kind: "finalStatus", status: "BLOCKED" });
      await fx.admin("POST", "/faults", { kind: "finalStatus", status: "CANCELLED" });
      const a = await fx.api("POST", "/v1/transactions", {
        body: transfer(asset, "7", ACCOUNT1, "0.01"),
      });
      const ta = await fx.waitTx(a.data.id as string);
      assert.equal(ta.status, "BLOCKED");
      assert.equal(ta.subStatus, "BLOCKED_BY_POLICY");
      const b = await fx.api("POST", "/v1/transactions", {
        body: transfer(asset, "7", ACCOUNT1, "0.01"),
      });
      assert.equal((await fx.waitTx(b.data.id as string)).status, "CANCELLED");
      const c = await fx.api("POST", "/v1/transactions", {
        body: transfer(asset, "7", ACCOUNT1, "0.01"),
      });
      assert.equal((await fx.waitTx(c.data.id as string)).status, "COMPLETED");
    });
  } finally {
    await fx.stop();
  }
});
