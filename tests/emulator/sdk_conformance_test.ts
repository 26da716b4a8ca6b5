/**
 * Conformance: the official TypeScript SDK (`@fireblocks/ts-sdk` from npm,
 * unchanged) drives every method the emulator serves of `WebhooksV2Api`,
 * `WebhooksApi` (V1 resends), `TransactionsApi` (create, get, get by
 * external id, list with each filter and the paging headers, cancel, the
 * two estimates), the vault reads, `BlockchainsAssetsApi` and the
 * whitelisted-wallet reads; each answer's status code is the one the SDK
 * documents and its body fits the SDK's own model (`sdk_models.ts` reads
 * the SDK's declaration files: required fields, enums, nested models). A
 * drift of the emulator, or a change of the SDK's models, fails here.
 */

import assert from "node:assert/strict";
import { Fireblocks as OfficialSdk } from "@fireblocks/ts-sdk";
import { type Fixture, startFixture, STORE_CONTRACT_INIT } from "../support/emulator_fixture.ts";
import { startReceiver } from "../support/receiver.ts";
import { waitFor } from "../support/emulator_process.ts";
import { assertSdkModel, legacySdkFields } from "../support/sdk_models.ts";
import { DEFAULT_BREAKER_CONFIG } from "../../lib/webhooks/mod.ts";

const ACCOUNT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/** The status and body of an SDK call that is expected to fail. */
async function refused(p: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await p;
  } catch (e) {
    const r = (e as { response?: { statusCode: number; data: { message: string; code: number } } })
      .response;
    assert.ok(r, `an HTTP answer, not ${e}`);
    assert.equal(typeof r.data.code, "number");
    return { status: r.statusCode, message: r.data.message };
  }
  throw new Error("the call succeeded; a refusal was expected");
}

Deno.test("the official SDK's served methods answer as its models say", async (t) => {
  // the breaker held off: the r-fail deliveries must not suspend the endpoint here
  const fx: Fixture = await startFixture({
    timeScale: 10_000,
    webhooks: { breaker: { ...DEFAULT_BREAKER_CONFIG, minAttempts: 1_000_000 } },
  });
  const rc = startReceiver({
    jwksUrl: fx.emu.jwksUrl,
    script: (_n, body) => (body.resourceId === "r-fail" ? 404 : 200),
  });
  const sdk = new OfficialSdk({
    apiKey: fx.emu.apiKey,
    secretKey: fx.emu.privateKeyPem,
    basePath: `${fx.emu.apiBaseUrl}/v1`,
  });
  const asset = fx.emu.assetId;
  try {
    await t.step("WebhooksV2Api: every method", async () => {
      const api = sdk.webhooksV2;
      const c = await api.createWebhook({
        createWebhookRequest: {
          url: `${rc.url}/hook`,
          events: ["transaction.created", "transaction.status.updated"],
          description: "conformance",
        },
      });
      assert.equal(c.statusCode, 201);
      assertSdkModel(c.data, "Webhook");
      const w = c.data.id;
      const extra = await api.createWebhook({
        createWebhookRequest: { url: `${rc.url}/other`, events: ["vault_account.created"] },
      });
      const list = await api.getWebhooks({ pageSize: 1, order: "ASC" });
      assert.equal(list.statusCode, 200);
      assertSdkModel(list.data, "WebhookPaginatedResponse");
      assert.ok(list.data.next, "a second page");
      const page2 = await api.getWebhooks({
        pageSize: 1,
        order: "ASC",
        pageCursor: list.data.next!,
      });
      assert.equal(page2.data.data[0].id, extra.data.id);
      const got = await api.getWebhook({ webhookId: w });
      assert.equal(got.statusCode, 200);
      assertSdkModel(got.data, "Webhook");
      const upd = await api.updateWebhook({
        webhookId: w,
        updateWebhookRequest: { description: "renamed" },
      });
      assert.equal(upd.statusCode, 200);
      assertSdkModel(upd.data, "Webhook");

      // the event list is the platform's enum: 400 naming the allowed events
      const bad = await refused(api.createWebhook({
        // deno-lint-ignore no-explicit-any
        createWebhookRequest: { url: `${rc.url}/x`, events: ["no.such.event" as any] },
      }));
      assert.equal(bad.status, 400);
      assert.match(bad.message, /"no\.such\.event".*transaction\.created.*vault_account\.created/);

      for (const resourceId of ["r-ok", "r-ok", "r-fail", "r-fail"]) {
        await fx.admin("POST", "/notifications", { eventType: "transaction.created", resourceId });
      }
      await rc.waitForCount(4);
      await waitFor(
        "two FAILED",
        async () =>
          (await api.getNotifications({ webhookId: w, statuses: ["FAILED"] })).data.total === 2,
      );
      const ns = await api.getNotifications({ webhookId: w, pageSize: 3, order: "ASC" });
      assert.equal(ns.statusCode, 200);
      assertSdkModel(ns.data, "NotificationPaginatedResponse");
      assert.equal(ns.data.total, 4);
      const failedId = (await api.getNotifications({ webhookId: w, resourceId: "r-fail" })).data
        .data[0].id;
      const one = await api.getNotification({
        webhookId: w,
        notificationId: failedId,
        includeData: true,
      });
      assert.equal(one.statusCode, 200);
      assertSdkModel(one.data, "NotificationWithData");
      const attempts = await api.getNotificationAttempts({
        webhookId: w,
        notificationId: failedId,
      });
      assert.equal(attempts.statusCode, 200);
      assertSdkModel(attempts.data, "NotificationAttemptsPaginatedResponse");

      const quiet = async () =>
        (await api.getNotifications({ webhookId: w, statuses: ["IN_PROGRESS"] })).data.total === 0;
      const r1 = await api.resendNotificationById({ webhookId: w, notificationId: failedId });
      assert.equal(r1.statusCode, 202);
      await waitFor("quiet", quiet);
      const r2 = await api.resendNotificationsByResourceId({
        webhookId: w,
        resendNotificationsByResourceIdRequest: { resourceId: "r-fail" },
      });
      assert.equal(r2.statusCode, 202);
      await waitFor("quiet", quiet);

      const rf = await api.resendFailedNotifications({
        webhookId: w,
        resendFailedNotificationsRequest: {},
      });
      assert.equal(rf.statusCode, 202);
      assertSdkModel(rf.data, "ResendFailedNotificationsResponse");
      const failedJob = rf.headers["location"].split("/").pop()!;
      const fj = await api.getResendJobStatus({ webhookId: w, jobId: failedJob });
      assert.equal(fj.statusCode, 200);
      assertSdkModel(fj.data, "ResendFailedNotificationsJobStatusResponse");
      await waitFor("quiet", quiet);

      // resend by query: every status of the last 24 hours, one call, a job to follow
      const before = rc.received.length;
      const rq = await api.resendNotificationsByQuery({
        webhookId: w,
        resendByQueryRequest: { statuses: ["COMPLETED", "FAILED", "IN_PROGRESS", "ON_HOLD"] },
      });
      assert.equal(rq.statusCode, 202);
      assertSdkModel(rq.data, "ResendByQueryResponse");
      assert.equal(rq.data.total, 4);
      const location = rq.headers["location"];
      assert.match(location, new RegExp(`/v1/webhooks/${w}/notifications/resend_by_query/jobs/`));
      const jobId = location.split("/").pop()!;
      const job = await waitFor("the by-query job to complete", async () => {
        const j = await api.getResendByQueryJobStatus({ webhookId: w, jobId });
        assert.equal(j.statusCode, 200);
        assertSdkModel(j.data, "ResendFailedNotificationsJobStatusResponse");
        return j.data.status === "COMPLETED" ? j.data : undefined;
      });
      assert.deepEqual(job, { jobId, status: "COMPLETED", processed: 4, total: 4 });
      await waitFor("4 resent", () => rc.received.length >= before + 4);
      // a by-query job is not a resend-failed job
      assert.equal(
        (await refused(api.getResendJobStatus({ webhookId: w, jobId }))).status,
        404,
      );
      // defaults (FAILED, ON_HOLD) of one resource; nothing matching: 200 {total: 0}
      await waitFor("quiet", quiet);
      const none = await api.resendNotificationsByQuery({
        webhookId: w,
        resendByQueryRequest: { resourceId: "r-ok" },
      });
      assert.equal(none.statusCode, 200);
      assert.equal(none.data.total, 0);
      // the window's limits are the SDK's: at most 24 hours, within the last 72
      const now = Date.now();
      const wide = await refused(api.resendNotificationsByQuery({
        webhookId: w,
        resendByQueryRequest: { startTime: now - 30 * 3_600_000, endTime: now },
      }));
      assert.equal(wide.status, 400);
      assert.match(wide.message, /at most 24 hours/);

      const metric = await api.getMetrics({
        webhookId: w,
        metricName: "LAST_ACTIVE_HOUR_ERROR_RATE",
      });
      assert.equal(metric.statusCode, 200);
      assertSdkModel(metric.data, "WebhookMetric");
      const del = await api.deleteWebhook({ webhookId: extra.data.id });
      assert.equal(del.statusCode, 200);
      assertSdkModel(del.data, "Webhook");
    });

    await t.step("WebhooksApi (V1): resend failed and resend a transaction's", async () => {
      const all = await sdk.webhooks.resendWebhooks();
      assert.equal(all.statusCode, 200);
      // messagesCount for this SDK, webhooksCount for the older one (same value)
      assertSdkModel(all.data, "ResendWebhooksResponse", legacySdkFields("ResendWebhooksResponse"));
      // a transaction this workspace does not have: 404 (resent below for a real one)
      const unknown = await refused(sdk.webhooks.resendTransactionWebhooks({
        txId: "r-ok",
        resendTransactionWebhooksRequest: { resendCreated: true },
      }));
      assert.equal(unknown.status, 404);
    });

    let txId = "";
    let txHash = "";
    await t.step("TransactionsApi: create, get, get by external id, estimates", async () => {
      const api = sdk.transactions;
      const net = await api.estimateNetworkFee({ assetId: asset });
      assert.equal(net.statusCode, 200);
      assertSdkModel(net.data, "EstimatedNetworkFeeResponse");
      assert.ok(Number(net.data.low.gasPrice) <= Number(net.data.high.gasPrice));
      const request = {
        operation: "TRANSFER" as const,
        assetId: asset,
        source: { type: "VAULT_ACCOUNT" as const, id: "0" },
        destination: {
          type: "ONE_TIME_ADDRESS" as const,
          oneTimeAddress: { address: ACCOUNT1 },
        },
        amount: "0.01",
      };
      const fee = await api.estimateTransactionFee({ transactionRequest: request });
      assert.equal(fee.statusCode, 200);
      assertSdkModel(fee.data, "EstimatedTransactionFeeResponse");
      assert.equal(fee.data.medium.gasLimit, "21000");
      const created = await api.createTransaction({
        transactionRequest: { ...request, externalTxId: "conf-1", customerRefId: "customer-7" },
      });
      assert.equal(created.statusCode, 200);
      assertSdkModel(created.data, "CreateTransactionResponse");
      txId = created.data.id!;
      const done = await fx.waitTx(txId);
      assert.equal(done.status, "COMPLETED");
      txHash = String(done.txHash);
      const got = await api.getTransaction({ txId });
      assert.equal(got.statusCode, 200);
      assertSdkModel(got.data, "TransactionResponse");
      assert.equal(got.data.customerRefId, "customer-7");
      // V1 resend of a transaction's notifications: the TypeScript SDK's model requires
      // success, the older SDK's type reads webhooksCount (a count of what was resent)
      const byTx = await sdk.webhooks.resendTransactionWebhooks({
        txId,
        resendTransactionWebhooksRequest: { resendCreated: true },
      });
      assert.equal(byTx.statusCode, 200);
      const legacy = legacySdkFields("ResendWebhooksResponse");
      assert.deepEqual(legacy, ["webhooksCount"]);
      assertSdkModel(byTx.data, "ResendWebhooksByTransactionIdResponse", legacy);
      assert.equal(byTx.data.success, true);
      assert.equal((byTx.data as unknown as { webhooksCount: number }).webhooksCount, 1);
      const ext = await api.getTransactionByExternalId({ externalTxId: "conf-1" });
      assert.equal(ext.statusCode, 200);
      assertSdkModel(ext.data, "TransactionResponse");
      assert.equal(ext.data.id, txId);
      // a message signing has a destination with a type, as the model requires
      const msg = await api.createTransaction({
        transactionRequest: {
          operation: "TYPED_MESSAGE",
          assetId: asset,
          source: { type: "VAULT_ACCOUNT", id: "1" },
          extraParameters: {
            rawMessageData: { messages: [{ content: "48656c6c6f", type: "ETH_MESSAGE" }] },
          },
        },
      });
      await fx.waitTx(msg.data.id!);
      const signed = await api.getTransaction({ txId: msg.data.id! });
      assertSdkModel(signed.data, "TransactionResponse");
      assert.equal(signed.data.destination?.type, "UNKNOWN");
      const deploy = await api.estimateTransactionFee({
        transactionRequest: {
          operation: "CONTRACT_CALL",
          assetId: asset,
          source: { type: "VAULT_ACCOUNT", id: "0" },
          extraParameters: { contractCallData: STORE_CONTRACT_INIT },
        },
      });
      assert.ok(Number(deploy.data.low.gasLimit) > 21_000);
    });

    await t.step("TransactionsApi: list with each filter, paging headers, cancel", async () => {
      const api = sdk.transactions;
      // two more transfers from account 2 to account 3, one held to be cancelled
      const make = (amount: string) =>
        api.createTransaction({
          transactionRequest: {
            operation: "TRANSFER",
            assetId: asset,
            source: { type: "VAULT_ACCOUNT", id: "2" },
            destination: { type: "VAULT_ACCOUNT", id: "3" },
            amount,
          },
        });
      const done2 = (await make("0.02")).data.id!;
      await fx.waitTx(done2);
      assert.equal((await fx.admin("POST", "/faults", { kind: "hold", count: 1 })).status, 201);
      const held = (await make("0.03")).data.id!;
      await fx.waitTx(held, (t) => t.status === "PENDING_AUTHORIZATION");
      const cancel = await api.cancelTransaction({ txId: held });
      assert.equal(cancel.statusCode, 200);
      assertSdkModel(cancel.data, "CancelTransactionResponse");

      const ids = async (q: Parameters<typeof api.getTransactions>[0]) => {
        const r = await api.getTransactions(q);
        assert.equal(r.statusCode, 200);
        assertSdkModel(r.data, "Array<TransactionResponse>");
        return r.data.map((t) => t.id);
      };
      const everything = await ids({});
      assert.ok(everything.length >= 4);
      assert.deepEqual(await ids({ txHash }), [txId]);
      assert.deepEqual(await ids({ status: "CANCELLED" }), [held]);
      assert.deepEqual(await ids({ sourceType: "VAULT_ACCOUNT", sourceId: "2" }), [held, done2]);
      assert.deepEqual(await ids({ destType: "VAULT_ACCOUNT", destId: "3" }), [held, done2]);
      assert.deepEqual(await ids({ destType: "ONE_TIME_ADDRESS" }), [txId]);
      assert.deepEqual(await ids({ assets: asset, limit: 1 }), [everything[0]]);
      assert.deepEqual(await ids({ assets: "BTC" }), []);
      // end-user wallets: the emulator has none
      assert.deepEqual(await ids({ sourceWalletId: "w-1" }), []);
      assert.deepEqual(await ids({ destWalletId: "w-1" }), []);
      assert.deepEqual(await ids({ sort: "ASC" }), [...everything].reverse());
      const created = (await api.getTransaction({ txId: done2 })).data.createdAt!;
      assert.deepEqual(await ids({ after: String(created - 1), sourceId: "2" }), [held, done2]);
      assert.deepEqual(await ids({ before: String(created), sourceId: "2" }), []);
      const byUpdate = await ids({ orderBy: "lastUpdated", sort: "DESC", limit: 1 });
      assert.deepEqual(byUpdate, [held], "the cancel was the last update");

      // paging: next-page/prev-page headers, followed with the SDK's next/prev
      const first = await api.getTransactions({ limit: 2 });
      assert.deepEqual(first.data.map((t) => t.id), everything.slice(0, 2));
      assert.equal(first.headers["prev-page"], undefined);
      const nextUrl = new URL(first.headers["next-page"]);
      assert.equal(nextUrl.pathname, "/v1/transactions");
      const second = await api.getTransactions({ next: nextUrl.searchParams.get("next")! });
      assert.deepEqual(second.data.map((t) => t.id), everything.slice(2, 4));
      const prevUrl = new URL(second.headers["prev-page"]);
      const back = await api.getTransactions({ prev: prevUrl.searchParams.get("prev")! });
      assert.deepEqual(back.data.map((t) => t.id), everything.slice(0, 2));
      const walk: string[] = [];
      let next: string | undefined = undefined;
      do {
        const r: Awaited<ReturnType<typeof api.getTransactions>> = await api.getTransactions(
          next ? { next } : { limit: 1 },
        );
        walk.push(...r.data.map((t) => t.id!));
        const h = r.headers["next-page"];
        next = h ? new URL(h).searchParams.get("next")! : undefined;
      } while (next);
      assert.deepEqual(walk, everything);
      const badCursor = await refused(api.getTransactions({ next: "garbage" }));
      assert.equal(badCursor.status, 400);
      // a cursor is client input: its filter is checked again (400, never a 500)
      const forged = btoa(JSON.stringify({ d: "next", q: "limit=99999", k: 1, s: 1 }))
        .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
      const forgedAnswer = await refused(api.getTransactions({ next: forged }));
      assert.equal(forgedAnswer.status, 400);
      assert.match(forgedAnswer.message, /limit must be an integer from 1 to 500/);
    });

    await t.step("VaultsApi reads", async () => {
      const api = sdk.vaults;
      const paged = await api.getPagedVaultAccounts({ limit: 2 });
      assert.equal(paged.statusCode, 200);
      assertSdkModel(paged.data, "VaultAccountsPagedResponse");
      const acc = await api.getVaultAccount({ vaultAccountId: "0" });
      assertSdkModel(acc.data, "VaultAccount");
      const va = await api.getVaultAccountAsset({ vaultAccountId: "0", assetId: asset });
      assertSdkModel(va.data, "VaultAsset");
      const addrs = await api.getVaultAccountAssetAddressesPaginated({
        vaultAccountId: "0",
        assetId: asset,
      });
      assertSdkModel(addrs.data, "PaginatedAddressResponse");
      assert.equal((await refused(api.getVaultAccount({ vaultAccountId: "999" }))).status, 404);
    });

    await t.step("BlockchainsAssetsApi and the whitelisted-wallet reads", async () => {
      const ba = sdk.blockchainsAssets;
      const chains = await ba.listBlockchains({ protocol: "ETH" });
      assert.equal(chains.statusCode, 200);
      assertSdkModel(chains.data, "ListBlockchainsResponse");
      const mine = chains.data.data.find((c) => c.legacyId === asset)!;
      const chain = await ba.getBlockchain({ id: mine.id });
      assertSdkModel(chain.data, "BlockchainResponse");
      const a = await ba.getAsset({ id: mine.nativeAssetId });
      assertSdkModel(a.data, "Asset");
      const assets = await ba.listAssets({ blockchainId: mine.id });
      assertSdkModel(assets.data, "ListAssetsResponse");
      assert.equal(assets.data.data[0].legacyId, asset);
      const supported = await ba.getSupportedAssets();
      assert.equal(supported.statusCode, 200);
      assertSdkModel(supported.data, "Array<AssetTypeResponse>");
      assert.ok(supported.data.some((s) => s.id === asset));

      const added = await fx.admin("POST", "/wallets", {
        type: "EXTERNAL_WALLET",
        name: "Treasury",
        address: ACCOUNT1,
      });
      assert.equal(added.status, 201);
      const ext = await sdk.externalWallets.getExternalWallets();
      assertSdkModel(ext.data, "Array<UnmanagedWallet>");
      const one = await sdk.externalWallets.getExternalWallet({ walletId: added.data.id });
      assertSdkModel(one.data, "UnmanagedWallet");
      assert.equal(one.data.name, "Treasury");
      assertSdkModel(
        (await sdk.internalWallets.getInternalWallets()).data,
        "Array<UnmanagedWallet>",
      );
      const contract = await fx.admin("POST", "/wallets", {
        type: "CONTRACT",
        name: "Token",
        address: ACCOUNT1,
      });
      const contracts = await sdk.contracts.getContracts();
      assertSdkModel(contracts.data, "Array<UnmanagedWallet>");
      assert.deepEqual(contracts.data.map((c) => c.id), [contract.data.id]);
      const oneContract = await sdk.contracts.getContract({ contractId: contract.data.id });
      assertSdkModel(oneContract.data, "UnmanagedWallet");
      assert.equal(
        (await refused(sdk.internalWallets.getInternalWallet({ walletId: added.data.id }))).status,
        404,
      );
    });

    await t.step("a call the emulator does not serve: one 404 naming it", async () => {
      const r = await refused(sdk.staking.getChains());
      assert.equal(r.status, 404);
      assert.match(r.message, /does not serve GET \/v1\/staking\/chains/);
      const p = await refused(sdk.transactions.freezeTransaction({ txId }));
      assert.equal(p.status, 404);
      assert.match(p.message, /does not serve POST \/v1\/transactions\/.*\/freeze.*It serves/);
    });
    assert.ok(rc.received.every((r) => r.signatureOk));
  } finally {
    await rc.close();
    await fx.stop();
  }
});
