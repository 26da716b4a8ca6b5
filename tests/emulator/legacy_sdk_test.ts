/**
 * The older official JavaScript SDK (`fireblocks-sdk` 5.x from npm,
 * unchanged, still the most installed) against the emulator: its Webhooks
 * V1 resends, its unpaged deposit addresses and supported assets, the fee
 * estimates, and the transaction list it pages by following the
 * `next-page`/`prev-page` headers (`getTransactionsWithPageInfo`), plus
 * create/get/cancel with `customerRefId`.
 *
 * `package.json` lists the package (devDependencies); on a checkout whose
 * node_modules predates it, the test is skipped with a note (run `npm ci`).
 */

import assert from "node:assert/strict";
import { type Fixture, startFixture } from "../support/emulator_fixture.ts";

const ACCOUNT0 = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const ACCOUNT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

// a variable specifier: type-checking must not need the package
const specifier = "fireblocks-sdk";
// deno-lint-ignore no-explicit-any
let legacy: any;
try {
  legacy = await import(specifier);
} catch {
  console.error("legacy_sdk_test: fireblocks-sdk is not installed (npm ci): skipped");
}

Deno.test({
  name: "the older SDK's calls work unchanged against the emulator",
  ignore: legacy === undefined,
  async fn(t) {
    const fx: Fixture = await startFixture();
    try {
      const sdk = new legacy.FireblocksSDK(fx.emu.privateKeyPem, fx.emu.apiKey, fx.emu.apiBaseUrl);
      const asset = fx.emu.assetId;

      await t.step("getDepositAddresses and getSupportedAssets", async () => {
        const addrs = await sdk.getDepositAddresses("0", asset);
        assert.ok(Array.isArray(addrs));
        assert.equal(addrs[0].address, ACCOUNT0);
        const supported = await sdk.getSupportedAssets();
        const mine = supported.find((a: { id: string }) => a.id === asset);
        assert.ok(mine, JSON.stringify(supported));
        for (const k of ["id", "name", "type", "contractAddress", "nativeAsset"]) {
          assert.equal(typeof mine[k], "string", k);
        }
      });

      await t.step("fee estimates: three levels", async () => {
        const net = await sdk.getFeeForAsset(asset);
        for (const level of ["low", "medium", "high"]) {
          assert.match(net[level].gasPrice, /^\d+(\.\d+)?$/, level);
          assert.match(net[level].networkFee, /^\d+(\.\d+)?$/, level);
        }
        const fee = await sdk.estimateFeeForTransaction({
          operation: "TRANSFER",
          assetId: asset,
          source: { type: "VAULT_ACCOUNT", id: "0" },
          destination: { type: "ONE_TIME_ADDRESS", oneTimeAddress: { address: ACCOUNT1 } },
          amount: "0.01",
        });
        assert.equal(fee.medium.gasLimit, "21000");
        assert.ok(fee.low.gasPrice <= fee.high.gasPrice);
      });

      const ids: string[] = [];
      await t.step("create with customerRefId, get, cancel", async () => {
        for (let i = 0; i < 3; i++) {
          const r = await sdk.createTransaction({
            operation: "TRANSFER",
            assetId: asset,
            source: { type: "VAULT_ACCOUNT", id: "0" },
            destination: { type: "ONE_TIME_ADDRESS", oneTimeAddress: { address: ACCOUNT1 } },
            amount: "0.001",
            customerRefId: `ref-${i}`,
            externalTxId: `legacy-${i}`,
          });
          ids.push(r.id);
          await fx.waitTx(r.id);
        }
        const got = await sdk.getTransactionById(ids[0]);
        assert.equal(got.customerRefId, "ref-0");
        assert.equal((await sdk.getTransactionByExternalTxId("legacy-2")).id, ids[2]);
        assert.equal((await fx.admin("POST", "/faults", { kind: "hold", count: 1 })).status, 201);
        const held = await sdk.createTransaction({
          operation: "TRANSFER",
          assetId: asset,
          source: { type: "VAULT_ACCOUNT", id: "1" },
          destination: { type: "VAULT_ACCOUNT", id: "2" },
          amount: "0.001",
        });
        await fx.waitTx(held.id, (tx) => tx.status === "PENDING_AUTHORIZATION");
        assert.deepEqual(await sdk.cancelTransactionById(held.id), { success: true });
        ids.push(held.id);
      });

      await t.step("getTransactionsWithPageInfo follows next-page and prev-page", async () => {
        const newestFirst = [...ids].reverse();
        const first = await sdk.getTransactionsWithPageInfo({ limit: 3 });
        assert.deepEqual(
          first.transactions.map((x: { id: string }) => x.id),
          newestFirst.slice(0, 3),
        );
        assert.equal(first.pageDetails.prevPage, "");
        assert.notEqual(first.pageDetails.nextPage, "");
        const second = await sdk.getTransactionsWithPageInfo(undefined, first.pageDetails.nextPage);
        assert.deepEqual(
          second.transactions.map((x: { id: string }) => x.id),
          newestFirst.slice(3),
        );
        assert.equal(second.pageDetails.nextPage, "");
        const back = await sdk.getTransactionsWithPageInfo(undefined, second.pageDetails.prevPage);
        assert.deepEqual(
          back.transactions.map((x: { id: string }) => x.id),
          newestFirst.slice(0, 3),
        );
        // the filters it sends as query keys
        const held = await sdk.getTransactions({ status: "CANCELLED" });
        assert.deepEqual(held.map((x: { id: string }) => x.id), [ids[3]]);
        const fromOne = await sdk.getTransactions({ sourceType: "VAULT_ACCOUNT", sourceId: "1" });
        assert.deepEqual(fromOne.map((x: { id: string }) => x.id), [ids[3]]);
      });

      await t.step("Webhooks V1 resends", async () => {
        const hook = await fx.api<{ id: string }>("POST", "/v1/webhooks", {
          body: { url: "http://127.0.0.1:9/hook", events: ["transaction.created"] },
        });
        assert.equal(hook.status, 201);
        const all = await sdk.resendWebhooks();
        assert.equal(typeof all.webhooksCount, "number");
        // its ResendWebhooksResponse type: {webhooksCount} (the hook came after the transaction:
        // none of its notifications to resend)
        assert.deepEqual(await sdk.resendTransactionWebhooksById(ids[0], true, true), {
          success: true,
          webhooksCount: 0,
        });
        // a transaction the workspace does not have: 404
        const status = await sdk.resendTransactionWebhooksById("no-such-tx", true).then(
          () => 200,
          (e: { response?: { status: number } }) => e.response?.status,
        );
        assert.equal(status, 404);
      });
    } finally {
      await fx.stop();
    }
  },
});
