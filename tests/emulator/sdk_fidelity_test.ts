/**
 * What the official SDKs' models and notes say, beyond the shapes: through
 * `@fireblocks/ts-sdk` (from npm, unchanged) against a real anvil.
 *
 * - No hash before the chain has one: a transfer that fails for lack of
 *   funds carries no `txHash`, in any answer or any webhook notification of
 *   its walk, and no transaction shows one before CONFIRMING (the SDK: a
 *   vault-sourced transaction has a hash once CONFIRMING or COMPLETED).
 * - Only declared fields: every transaction answer (get, by external id,
 *   list) and every webhook notification's `data` fits `TransactionResponse`
 *   with no field it does not declare, for a fee level, explicit EIP-1559
 *   fees, a legacy gas price and a one-time address.
 * - `resend_failed` takes a `startTime` at most 24 hours back (400 beyond,
 *   as resend by query refuses its own bound).
 * - `trigger` (the admin endpoint it calls) takes only the platform's
 *   webhook events.
 * - `before`/`after` both strict, at the one instant a transaction was
 *   created (an in-process engine whose clock ticks on every read, so that
 *   two reads of "now" never agree).
 * - A state file of an older emulator keeps working: its records are
 *   rewritten once (undeclared fields gone, a hash the chain never had
 *   cleared).
 */

import assert from "node:assert/strict";
import { Fireblocks as OfficialSdk } from "@fireblocks/ts-sdk";
import { type Fixture, startFixture } from "../support/emulator_fixture.ts";
import { startReceiver } from "../support/receiver.ts";
import { waitFor } from "../support/wait_for.ts";
import { assertSdkModel } from "../support/sdk_models.ts";
import { Store } from "../../lib/emulator/store.ts";
import { TransactionEngine } from "../../lib/emulator/transactions/engine.ts";
import { TRANSACTIONS_SCHEMA, TransactionStore } from "../../lib/emulator/transactions/store.ts";
import { parseTransactionListQuery } from "../../lib/emulator/transactions/list_query.ts";
import { ANVIL_MNEMONIC, VaultKeys } from "../../lib/emulator/vault/keys.ts";
import { EventBus } from "../../lib/emulator/events.ts";
import { Faults } from "../../lib/emulator/faults/faults.ts";

const ACCOUNT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
// the statuses that carry a hash: BROADCASTING too, as the official EIP-1193 provider expects
// (it ends its wait there and answers txHash) and the SDK allows ("in some instances")
const HASHED = ["BROADCASTING", "CONFIRMING", "COMPLETED"];

async function refusedStatus(p: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await p;
  } catch (e) {
    const r = (e as { response?: { statusCode: number; data: { message: string } } }).response;
    assert.ok(r, `an HTTP answer, not ${e}`);
    return { status: r.statusCode, message: r.data.message };
  }
  throw new Error("the call succeeded; a refusal was expected");
}

Deno.test("the SDK's models and notes: hashes, declared fields, resend bounds, events", async (t) => {
  const fx: Fixture = await startFixture({ timeScale: 10_000 });
  const rc = startReceiver({ jwksUrl: fx.emu.jwksUrl });
  const sdk = new OfficialSdk({
    apiKey: fx.emu.apiKey,
    secretKey: fx.emu.privateKeyPem,
    basePath: `${fx.emu.apiBaseUrl}/v1`,
  });
  const asset = fx.emu.assetId;
  const api = sdk.transactions;
  try {
    const hook = await sdk.webhooksV2.createWebhook({
      createWebhookRequest: {
        url: `${rc.url}/hook`,
        events: ["transaction.created", "transaction.status.updated"],
      },
    });
    const ota = { type: "ONE_TIME_ADDRESS" as const, oneTimeAddress: { address: ACCOUNT1 } };
    const base = {
      operation: "TRANSFER" as const,
      assetId: asset,
      source: { type: "VAULT_ACCOUNT" as const, id: "0" },
      destination: ota,
    };
    // what the node had at each moment a transaction was seen with a hash
    const seen: { status: string; txHash: string }[] = [];
    const watch = async (id: string) => {
      return await waitFor(
        `transaction ${id} to end`,
        async () => {
          const r = await api.getTransaction({ txId: id });
          seen.push({ status: r.data.status!, txHash: r.data.txHash ?? "" });
          return ["COMPLETED", "FAILED"].includes(r.data.status!) ? r.data : undefined;
        },
        20_000,
        1,
      );
    };

    await t.step("a transfer failed for lack of funds has no hash, anywhere", async () => {
      const poor = await api.createTransaction({
        transactionRequest: {
          ...base,
          source: { type: "VAULT_ACCOUNT", id: "4" },
          amount: "1000000",
        },
      });
      const id = poor.data.id!;
      const done = await watch(id);
      assert.equal(done.status, "FAILED");
      assert.equal(done.subStatus, "INSUFFICIENT_FUNDS");
      assert.ok(!done.txHash, `no hash, got ${JSON.stringify(done.txHash)}`);
      const listed = await api.getTransactions({ sourceId: "4" });
      assert.ok(!listed.data[0].txHash);
      // every notification of its walk (SUBMITTED ... FAILED): none has a hash, and it never
      // reached BROADCASTING (the lack of funds is found before signing)
      await waitFor(
        "its FAILED notification",
        () =>
          rc.received.some((r) =>
            r.json.resourceId === id && (r.json.data as { status?: string }).status === "FAILED"
          ),
      );
      const walk = rc.received.filter((r) => r.json.resourceId === id)
        .map((r) => r.json.data as { status: string; txHash?: string });
      assert.ok(!walk.some((d) => d.status === "BROADCASTING"), "it never reached BROADCASTING");
      assert.deepEqual(walk.filter((d) => d.txHash), []);
    });

    const made: string[] = [];
    await t.step(
      "no transaction shows a hash before BROADCASTING; the hash is the chain's",
      async () => {
        const r = await api.createTransaction({
          transactionRequest: { ...base, amount: "0.01", feeLevel: "HIGH", externalTxId: "fid-1" },
        });
        made.push(r.data.id!);
        const done = await watch(r.data.id!);
        assert.equal(done.status, "COMPLETED");
        const onChain = await (await fetch(fx.anvil.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "eth_getTransactionByHash",
            params: [done.txHash],
          }),
        })).json();
        assert.ok(onChain.result, "the chain has the hash answered");
        const early = seen.filter((s) => s.txHash && !HASHED.includes(s.status));
        assert.deepEqual(early, []);
        await waitFor(
          "its COMPLETED notification",
          () =>
            rc.received.some((x) =>
              x.json.resourceId === r.data.id &&
              (x.json.data as { status?: string }).status === "COMPLETED"
            ),
        );
        const notes = rc.received.filter((x) => x.json.resourceId === r.data.id)
          .map((x) => x.json.data as { status: string; txHash?: string });
        assert.deepEqual(notes.filter((d) => d.txHash && !HASHED.includes(d.status)), []);
      },
    );

    await t.step(
      "every transaction answer and notification holds only declared fields",
      async () => {
        // explicit EIP-1559 fees, and a legacy gas price
        for (const fees of [{ maxFee: "30", priorityFee: "2" }, { fee: "9" }]) {
          const r = await api.createTransaction({
            transactionRequest: { ...base, amount: "0.001", ...fees },
          });
          made.push(r.data.id!);
          await fx.waitTx(r.data.id!);
        }
        for (const id of made) {
          const got = await api.getTransaction({ txId: id });
          assertSdkModel(got.data, "TransactionResponse");
          assert.equal(got.data.destination?.type, "ONE_TIME_ADDRESS");
          assert.equal(got.data.destinationAddress, ACCOUNT1);
        }
        assertSdkModel(
          (await api.getTransactionByExternalId({ externalTxId: "fid-1" })).data,
          "TransactionResponse",
        );
        assertSdkModel((await api.getTransactions({})).data, "Array<TransactionResponse>");
        await waitFor("the notifications", () => rc.received.length >= 10);
        for (const r of rc.received) assertSdkModel(r.json.data, "TransactionResponse");
        const one = await sdk.webhooksV2.getNotifications({ webhookId: hook.data.id, pageSize: 1 });
        const withData = await sdk.webhooksV2.getNotification({
          webhookId: hook.data.id,
          notificationId: one.data.data[0].id,
          includeData: true,
        });
        assertSdkModel(withData.data.data, "TransactionResponse");
      },
    );

    await t.step("resend_failed reaches back 24 hours at most, as the SDK says", async () => {
      const now = Date.now();
      const old = await refusedStatus(sdk.webhooksV2.resendFailedNotifications({
        webhookId: hook.data.id,
        resendFailedNotificationsRequest: { startTime: now - 5 * 86_400_000 },
      }));
      assert.equal(old.status, 400);
      assert.match(old.message, /24 hours/);
      const future = await refusedStatus(sdk.webhooksV2.resendFailedNotifications({
        webhookId: hook.data.id,
        resendFailedNotificationsRequest: { startTime: now + 3_600_000 },
      }));
      assert.equal(future.status, 400);
      const ok = await sdk.webhooksV2.resendFailedNotifications({
        webhookId: hook.data.id,
        resendFailedNotificationsRequest: { startTime: now - 3_600_000 },
      });
      assert.equal(ok.statusCode, 200);
    });

    await t.step("trigger's events are the platform's webhook events", async () => {
      const bad = await fx.admin("POST", "/notifications", { eventType: "no.such.event" });
      assert.equal(bad.status, 400);
      assert.match(bad.data.message, /"no\.such\.event".*transaction\.created/);
      const good = await fx.admin("POST", "/notifications", { eventType: "vault_account.created" });
      assert.equal(good.status, 201);
    });
  } finally {
    await rc.close();
    await fx.stop();
  }
});

Deno.test("before and after are both strict at the instant a transaction was created", async () => {
  const store = Store.open();
  let clock = 1_700_000_000_000;
  const keys = new VaultKeys(ANVIL_MNEMONIC, 2);
  // every read of the clock is a millisecond later: no two reads agree
  const engine = new TransactionEngine({
    config: { chainId: 31337, assetId: "ETH_TEST_31337" },
    store,
    keys,
    events: new EventBus(),
    faults: new Faults(),
    log: () => {},
    now: () => clock++,
    uuid: () => crypto.randomUUID(),
  });
  try {
    const t = engine.create({
      operation: "TRANSFER",
      assetId: "ETH_TEST_31337",
      source: { type: "VAULT_ACCOUNT", id: "0" },
      destination: { type: "VAULT_ACCOUNT", id: "1" },
      amount: "0.1",
    });
    await engine.stop(); // no node: the walk stays where it is
    const at = Number(t.createdAt);
    const ids = (q: string) =>
      engine.list(parseTransactionListQuery(new URLSearchParams(q))).records.map((r) => r.id);
    assert.deepEqual(ids(`after=${at}`), [], "after=createdAt leaves it out");
    assert.deepEqual(ids(`before=${at}`), [], "before=createdAt leaves it out");
    assert.deepEqual(ids(`after=${at - 1}`), [t.id]);
    assert.deepEqual(ids(`before=${at + 1}`), [t.id]);
  } finally {
    store.close();
  }
});

Deno.test("a state file of an older emulator: its records are rewritten once to what the models declare", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/old.sqlite`;
    const old = Store.open(path);
    old.db.exec(TRANSACTIONS_SCHEMA);
    const row = (id: string, status: string, record: Record<string, unknown>) =>
      old.db.prepare(
        `INSERT INTO transactions (id, status, operation, account_id, tx_hash, request, record, created_at, updated_at)
         VALUES (?, ?, 'TRANSFER', 0, ?, '{}', ?, 1, 1)`,
      ).run(id, status, String(record.txHash), JSON.stringify({ id, status, ...record }));
    const h = `0x${"ab".repeat(32)}`;
    row("poor", "FAILED", {
      txHash: h,
      subStatus: "INSUFFICIENT_FUNDS",
      feeLevel: "MEDIUM",
      destination: { type: "ONE_TIME_ADDRESS", oneTimeAddress: { address: ACCOUNT1 } },
    });
    row("mined", "COMPLETED", {
      txHash: h,
      maxFee: "3",
      priorityFee: "1",
      contractAddress: ACCOUNT1,
      blockInfo: { blockHash: h },
    });
    row("sending", "BROADCASTING", { txHash: h, gasPrice: "9" });
    old.close();
    const store = Store.open(path);
    try {
      const transactions = new TransactionStore(store);
      assert.deepEqual(transactions.record("poor"), {
        id: "poor",
        status: "FAILED",
        txHash: "",
        subStatus: "INSUFFICIENT_FUNDS",
        destination: { type: "ONE_TIME_ADDRESS" },
      });
      assert.deepEqual(transactions.record("mined"), {
        id: "mined",
        status: "COMPLETED",
        txHash: h,
        blockInfo: { blockHash: h },
      });
      assert.deepEqual(transactions.record("sending"), {
        id: "sending",
        status: "BROADCASTING",
        txHash: "",
      });
      assert.equal(store.getMeta("transactions_records"), "2");
    } finally {
      store.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
