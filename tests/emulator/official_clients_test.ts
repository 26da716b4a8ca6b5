/**
 * The platform's official clients from npm drive the emulator unchanged:
 * `@fireblocks/ts-sdk` and `@fireblocks/fireblocks-web3-provider`, against a
 * real anvil; results are checked on anvil with viem.
 */

import assert from "node:assert/strict";
import { Fireblocks as OfficialSdk } from "@fireblocks/ts-sdk";
import { FireblocksWeb3Provider as OfficialWeb3Provider } from "@fireblocks/fireblocks-web3-provider";
import {
  createPublicClient,
  type Hex,
  http,
  padHex,
  recoverMessageAddress,
  recoverTypedDataAddress,
  toHex,
} from "viem";
import { type Fixture, startFixture, STORE_CONTRACT_INIT } from "../support/emulator_fixture.ts";
import { waitFor } from "../support/wait_for.ts";

const ACCOUNT0 = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const ACCOUNT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

let fx: Fixture;

Deno.test("official clients drive the emulator unchanged", async (t) => {
  fx = await startFixture();
  const chain = createPublicClient({ transport: http(fx.anvil.url) });
  try {
    await t.step("ts-sdk lists vault accounts with their real balances", async () => {
      const fb = new OfficialSdk({
        apiKey: fx.emu.apiKey,
        secretKey: fx.emu.privateKeyPem,
        basePath: fx.emu.apiBaseUrl + "/v1",
      });
      const page = await fb.vaults.getPagedVaultAccounts({ limit: 3, orderBy: "ASC" });
      const accounts = page.data.accounts ?? [];
      assert.deepEqual(accounts.map((a) => a.id), ["0", "1", "2"]);
      assert.deepEqual(accounts[0].assets?.[0].id, fx.emu.assetId);
      const wei = await chain.getBalance({ address: ACCOUNT1 });
      assert.deepEqual(accounts[1].assets?.[0].balance, (Number(wei) / 1e18).toString());
      assert.ok(page.data.paging?.after, "a next-page cursor, since there are 10 accounts");
      const next = await fb.vaults.getPagedVaultAccounts({
        limit: 3,
        orderBy: "ASC",
        after: page.data.paging!.after,
      });
      assert.deepEqual(next.data.accounts?.map((a) => a.id), ["3", "4", "5"]);
      const addrs = await fb.vaults.getVaultAccountAssetAddressesPaginated({
        vaultAccountId: "0",
        assetId: fx.emu.assetId,
      });
      assert.deepEqual(addrs.data.addresses?.[0].address, ACCOUNT0);
    });

    await t.step(
      "ts-sdk creates a transfer and reads it until COMPLETED with a mined hash",
      async () => {
        const fb = new OfficialSdk({
          apiKey: fx.emu.apiKey,
          secretKey: fx.emu.privateKeyPem,
          basePath: fx.emu.apiBaseUrl + "/v1",
        });
        const before = await chain.getBalance({ address: ACCOUNT1 });
        const created = await fb.transactions.createTransaction({
          transactionRequest: {
            operation: "TRANSFER",
            assetId: fx.emu.assetId,
            source: { type: "VAULT_ACCOUNT", id: "0" },
            destination: { type: "ONE_TIME_ADDRESS", oneTimeAddress: { address: ACCOUNT1 } },
            amount: "1.25",
            externalTxId: "sdk-transfer-1",
          },
        });
        assert.deepEqual(created.data.status, "SUBMITTED");
        const tx = await waitFor(
          "the transaction to end (COMPLETED or FAILED)",
          async () => {
            const t = (await fb.transactions.getTransaction({ txId: created.data.id! })).data;
            return t.status === "COMPLETED" || t.status === "FAILED" ? t : undefined;
          },
          30_000,
          20,
        );
        assert.deepEqual(tx.status, "COMPLETED");
        assert.match(String(tx.txHash), /^0x[0-9a-f]{64}$/);
        const receipt = await chain.getTransactionReceipt({ hash: tx.txHash as Hex });
        assert.deepEqual(receipt.status, "success");
        assert.deepEqual(receipt.from.toLowerCase(), ACCOUNT0.toLowerCase());
        assert.deepEqual(
          await chain.getBalance({ address: ACCOUNT1 }),
          before + 1_250_000_000_000_000_000n,
        );
        const byExt = await fb.transactions.getTransactionByExternalId({
          externalTxId: "sdk-transfer-1",
        });
        assert.deepEqual(byExt.data.id, created.data.id);
      },
    );

    await t.step("ts-sdk finds the chain's asset id through the blockchains lookup", async () => {
      const fb = new OfficialSdk({
        apiKey: fx.emu.apiKey,
        secretKey: fx.emu.privateKeyPem,
        basePath: fx.emu.apiBaseUrl + "/v1",
      });
      const list = await fb.blockchainsAssets.listBlockchains({ protocol: "ETH" });
      const entry = list.data.data.find((b) => b.onchain.chainId === String(fx.emu.chainId));
      assert.ok(entry, "the node's chain is listed");
      const asset = await fb.blockchainsAssets.getAsset({ id: entry.nativeAssetId });
      assert.deepEqual(asset.data.legacyId, fx.emu.assetId);
    });

    const provider = new OfficialWeb3Provider({
      apiKey: fx.emu.apiKey,
      privateKey: fx.emu.privateKeyPem,
      apiBaseUrl: fx.emu.apiBaseUrl,
      rpcUrl: fx.anvil.url,
      assetId: fx.emu.assetId,
      vaultAccountIds: [0],
      pollingInterval: 20,
      enhancedErrorHandling: false,
    });
    // deno-lint-ignore no-explicit-any
    type Any = any;
    const rpc = (method: string, params: unknown[] = []) =>
      provider.request({ method, params }) as Promise<Any>;

    await t.step("web3 provider answers eth_accounts with vault account 0's address", async () => {
      assert.deepEqual(await rpc("eth_accounts"), [ACCOUNT0]);
    });

    await t.step("web3 provider sends a transfer that is mined on anvil", async () => {
      const before = await chain.getBalance({ address: ACCOUNT1 });
      const hash = await rpc("eth_sendTransaction", [{
        from: ACCOUNT0,
        to: ACCOUNT1,
        value: toHex(10n ** 17n),
      }]);
      const receipt = await chain.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      assert.deepEqual(receipt.status, "success");
      assert.deepEqual(await chain.getBalance({ address: ACCOUNT1 }), before + 10n ** 17n);
    });

    await t.step("web3 provider deploys a contract and calls it, both mined", async () => {
      const deployHash = await rpc("eth_sendTransaction", [{
        from: ACCOUNT0,
        data: STORE_CONTRACT_INIT,
      }]);
      const deployed = await chain.waitForTransactionReceipt({
        hash: deployHash,
        pollingInterval: 20,
      });
      assert.deepEqual(deployed.status, "success");
      const address = deployed.contractAddress!;
      assert.ok(address, "a contract address");
      const data = ("0x12345678" + padHex(toHex(42), { size: 32 }).slice(2)) as Hex;
      const callHash = await rpc("eth_sendTransaction", [{ from: ACCOUNT0, to: address, data }]);
      const called = await chain.waitForTransactionReceipt({ hash: callHash, pollingInterval: 20 });
      assert.deepEqual(called.status, "success");
      assert.deepEqual(BigInt(await chain.getStorageAt({ address, slot: "0x0" }) ?? "0x0"), 42n);
    });

    await t.step(
      "web3 provider without one-time addresses sends to another vault account",
      async () => {
        const whitelisted = new OfficialWeb3Provider({
          apiKey: fx.emu.apiKey,
          privateKey: fx.emu.privateKeyPem,
          apiBaseUrl: fx.emu.apiBaseUrl,
          rpcUrl: fx.anvil.url,
          assetId: fx.emu.assetId,
          vaultAccountIds: [0, 1],
          oneTimeAddressesEnabled: false,
          pollingInterval: 20,
          enhancedErrorHandling: false,
        });
        const before = await chain.getBalance({ address: ACCOUNT1 });
        const hash = await whitelisted.request({
          method: "eth_sendTransaction",
          params: [{ from: ACCOUNT0, to: ACCOUNT1, value: toHex(10n ** 16n) }],
        }) as Hex;
        assert.equal(
          (await chain.waitForTransactionReceipt({ hash, pollingInterval: 20 })).status,
          "success",
        );
        assert.equal(await chain.getBalance({ address: ACCOUNT1 }), before + 10n ** 16n);
        const created = await fx.api<Record<string, Record<string, string>>[]>(
          "GET",
          "/v1/transactions",
          {
            query: { limit: 1 },
          },
        );
        assert.deepEqual(created.data[0].destination.type, "VAULT_ACCOUNT");
      },
    );

    await t.step(
      "web3 provider signs a personal message that recovers to the account",
      async () => {
        const message = "hello from the emulator";
        const sig = await rpc("personal_sign", [toHex(message), ACCOUNT0]);
        assert.deepEqual(await recoverMessageAddress({ message, signature: sig }), ACCOUNT0);
      },
    );

    await t.step("web3 provider signs EIP-712 data that recovers to the account", async () => {
      const typed = {
        types: {
          EIP712Domain: [
            { name: "name", type: "string" },
            { name: "version", type: "string" },
            { name: "chainId", type: "uint256" },
            { name: "verifyingContract", type: "address" },
          ],
          Mail: [{ name: "from", type: "address" }, { name: "contents", type: "string" }, {
            name: "amount",
            type: "uint256",
          }],
        },
        primaryType: "Mail",
        domain: {
          name: "Emulator",
          version: "1",
          chainId: fx.emu.chainId,
          verifyingContract: "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC",
        },
        message: { from: ACCOUNT1, contents: "hi", amount: "12345" },
      } as const;
      const sig = await rpc("eth_signTypedData_v4", [ACCOUNT0, JSON.stringify(typed)]);
      const { EIP712Domain: _d, ...types } = typed.types;
      const recovered = await recoverTypedDataAddress({
        domain: typed.domain,
        types,
        primaryType: "Mail",
        message: { ...typed.message, amount: 12345n },
        signature: sig,
      });
      assert.deepEqual(recovered, ACCOUNT0);
    });
  } finally {
    await fx.stop();
  }
});
