/**
 * The emulator's whitelist (`POST /admin/wallets`, the three wallet lists,
 * wallet destinations) and the fee level kept on each transaction, against a
 * real anvil: what the bridge's `--oneTimeAddressesEnabled false` and
 * `--fallbackFeeLevel` are tested with.
 */
import assert from "node:assert/strict";
import { startFixture, transfer } from "../support/emulator_fixture.ts";

const ACCOUNT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const TREASURY = "0x00000000000000000000000000000000000bEEf1"; // checksummed (EIP-55)

Deno.test("emulator whitelist and feeLevel", async (t) => {
  const fx = await startFixture();
  const asset = fx.emu.assetId;
  try {
    await t.step(
      "the lists start empty; POST /admin/wallets adds to the list of its type",
      async () => {
        for (const path of ["/v1/external_wallets", "/v1/internal_wallets", "/v1/contracts"]) {
          assert.deepEqual((await fx.api("GET", path)).data, []);
        }
        const added = await fx.admin("POST", "/wallets", {
          type: "CONTRACT",
          name: "Vault contract",
          address: TREASURY.toLowerCase(),
        });
        assert.equal(added.status, 201);
        assert.equal(added.data.type, "CONTRACT");
        const list = await fx.api<Record<string, unknown>[]>("GET", "/v1/contracts");
        assert.deepEqual(list.data, [{
          id: added.data.id,
          name: "Vault contract",
          customerRefId: "",
          assets: [{
            id: asset,
            balance: "0",
            lockedAmount: "0",
            status: "APPROVED",
            address: TREASURY, // checksummed
            tag: "",
          }],
        }]);
        assert.deepEqual((await fx.api("GET", "/v1/external_wallets")).data, []);
      },
    );

    await t.step(
      "bad wallets are 400 with a message; the admin route needs the API key",
      async () => {
        for (
          const [body, message] of [
            [{ address: "0x123" }, /address must be an EVM address/],
            [{ type: "BANK", address: TREASURY }, /type must be one of EXTERNAL_WALLET/],
            [[], /Expected a JSON object/],
          ] as const
        ) {
          const r = await fx.admin("POST", "/wallets", body);
          assert.equal(r.status, 400, JSON.stringify(r.data));
          assert.match(r.data.message, message);
        }
        const anonymous = await fetch(
          `${fx.emu.apiBaseUrl.replace(/\/v1\/?$/, "")}/admin/wallets`,
          {
            method: "POST",
            body: JSON.stringify({ address: TREASURY }),
          },
        );
        assert.ok(anonymous.status === 401 || anonymous.status === 403, String(anonymous.status));
        await anonymous.body?.cancel();
      },
    );

    await t.step(
      "a transfer to a whitelisted wallet by id reaches its address; an unknown id is 400",
      async () => {
        const added = await fx.admin("POST", "/wallets", {
          type: "EXTERNAL_WALLET",
          name: "Treasury",
          address: ACCOUNT1,
        });
        const body = {
          ...transfer(asset, "0", ACCOUNT1, "0.001"),
          destination: { type: "EXTERNAL_WALLET", id: added.data.id },
        };
        const created = await fx.api<{ id: string }>("POST", "/v1/transactions", { body });
        assert.ok(created.status < 300, JSON.stringify(created.data));
        const tx = await fx.waitTx(created.data.id);
        assert.equal(tx.status, "COMPLETED");
        assert.deepEqual(tx.destination, {
          type: "EXTERNAL_WALLET",
          id: added.data.id,
          name: "Treasury",
        });
        assert.equal(tx.destinationAddress, ACCOUNT1);
        const unknown = await fx.api("POST", "/v1/transactions", {
          body: { ...body, destination: { type: "INTERNAL_WALLET", id: added.data.id } },
        });
        assert.equal(unknown.status, 400);
        assert.match(String(unknown.data.message), /INTERNAL_WALLET ".*" is not whitelisted/);
      },
    );

    await t.step(
      "feeLevel is kept inside the emulator, not in the answer (the level asked for, MEDIUM when none, explicit fees): the console shows it",
      async () => {
        const cases: [Record<string, unknown>, string][] = [
          [{ feeLevel: "low" }, "LOW"],
          [{ feeLevel: "HIGH" }, "HIGH"],
          [{}, "MEDIUM"],
          [{ maxFee: "30", priorityFee: "1" }, "EIP-1559"],
          [{ fee: "9" }, "legacy"],
        ];
        const token = new URL(fx.emu.consoleUrl).searchParams.get("token")!;
        for (const [extra, want] of cases) {
          const r = await fx.api<{ id: string }>("POST", "/v1/transactions", {
            body: transfer(asset, "0", ACCOUNT1, "0.0001", extra),
          });
          assert.ok(r.status < 300, JSON.stringify(r.data));
          const got = await fx.api<Record<string, unknown>>("GET", `/v1/transactions/${r.data.id}`);
          assert.equal(got.data.feeLevel, undefined, "TransactionResponse declares no feeLevel");
          const overview = await (await fetch(`${fx.emu.apiBaseUrl}/console/api/overview`, {
            headers: { "x-console-token": token },
          })).json();
          const row = overview.transactions.find((t: { id: string }) => t.id === r.data.id);
          assert.equal(row.fee, want, JSON.stringify(extra));
        }
      },
    );
  } finally {
    await fx.stop();
  }
});
