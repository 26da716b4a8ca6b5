/**
 * The emulator's API behaviour against a real anvil: errors and their
 * shape, garbage input, idempotency, externalTxId, failures reported by the
 * node, concurrent nonces, fees, and the event hook.
 */

import assert from "node:assert/strict";
import { createPublicClient, type Hex, http } from "viem";
import type { EmulatorEvent } from "../../lib/emulator/mod.ts";
import {
  claimsFor,
  signClaims,
  startFixture,
  STORE_CONTRACT_INIT,
  transfer,
} from "../support/emulator_fixture.ts";

const ACCOUNT0 = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const ACCOUNT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const ACCOUNT3 = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";

Deno.test("emulator API", async (t) => {
  const events: EmulatorEvent[] = [];
  const fx = await startFixture({ events: (e) => events.push(e) });
  const chain = createPublicClient({ transport: http(fx.anvil.url) });
  const asset = fx.emu.assetId;
  try {
    await t.step("an unknown path is 404 {message, code} with X-Request-ID", async () => {
      const r = await fx.api("GET", "/v1/no/such/thing");
      assert.equal(r.status, 404);
      assert.equal(typeof (r.data as Record<string, unknown>).message, "string");
      assert.equal(typeof (r.data as Record<string, unknown>).code, "number");
      const raw = await fetch(fx.emu.apiBaseUrl + "/nothing-here");
      assert.equal(raw.status, 404);
      assert.ok(raw.headers.get("x-request-id"));
      await raw.body?.cancel();
    });

    await t.step("every answer carries a distinct X-Request-ID", async () => {
      const a = await fetch(fx.emu.consoleUrl);
      const b = await fetch(fx.emu.jwksUrl);
      await a.text();
      // the webhook side serves its signing key here
      const jwks = await b.json();
      assert.equal(jwks.keys.length, 1);
      assert.equal(jwks.keys[0].alg, "RS512");
      assert.ok(a.headers.get("x-request-id"));
      assert.notEqual(a.headers.get("x-request-id"), b.headers.get("x-request-id"));
    });

    await t.step("malformed JSON is 400", async () => {
      const body = '{"operation": "TRANSFER", ';
      const token = await signClaims(
        fx.emu.privateKeyPem,
        await claimsFor(fx.emu.apiKey, "/v1/transactions", body),
      );
      const res = await fetch(fx.emu.apiBaseUrl + "/v1/transactions", {
        method: "POST",
        headers: { "X-API-Key": fx.emu.apiKey, Authorization: `Bearer ${token}` },
        body,
      });
      assert.equal(res.status, 400);
      assert.match((await res.json()).message, /JSON/);
    });

    await t.step("a body over the limit is 413", async () => {
      const res = await fetch(fx.emu.apiBaseUrl + "/v1/transactions", {
        method: "POST",
        body: "x".repeat(2 * 1024 * 1024),
      });
      assert.equal(res.status, 413);
      assert.equal(typeof (await res.json()).code, "number");
    });

    await t.step("garbage on the socket and odd requests never stop the server", async () => {
      for (
        const bytes of [
          "GARBAGE\r\n\r\n",
          "\x00\x01\x02\xff\r\n\r\n",
          "GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n",
        ]
      ) {
        const conn = await Deno.connect({
          hostname: "127.0.0.1",
          port: new URL(fx.emu.apiBaseUrl).port as unknown as number,
        });
        await conn.write(new TextEncoder().encode(bytes));
        const buf = new Uint8Array(512);
        await conn.read(buf).catch(() => null);
        conn.close();
      }
      const odd = await fetch(fx.emu.apiBaseUrl + "/v1/vault/accounts/%zz");
      assert.ok(odd.status >= 400 && odd.status < 500);
      await odd.body?.cancel();
      const wrongMethod = await fetch(fx.emu.apiBaseUrl + "/v1/vault/accounts_paged", {
        method: "DELETE",
      });
      // a call the emulator does not serve: one error naming it, never a 405
      assert.equal(wrongMethod.status, 404);
      assert.match(
        (await wrongMethod.json()).message,
        /does not serve DELETE \/v1\/vault\/accounts_paged.*GET \/v1\/vault\/accounts_paged/,
      );
      for (
        const body of [[], "x", 1, null, { operation: 5 }, {
          assetId: asset,
          source: { type: "VAULT_ACCOUNT", id: "99" },
        }]
      ) {
        const r = await fx.api("POST", "/v1/transactions", { body });
        assert.equal(r.status, 400, JSON.stringify(body));
      }
      const alive = await fx.api("GET", "/v1/vault/accounts/0");
      assert.equal(alive.status, 200);
    });

    await t.step("300 random requests never get a 5xx and always an X-Request-ID", async () => {
      let seed = 42;
      const rand = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      const pick = <T>(xs: T[]) => xs[rand(xs.length)];
      const segs = [
        "v1",
        "vault",
        "accounts",
        "0",
        "99",
        "transactions",
        "external_tx_id",
        "..",
        "%00",
        "%E2%82%AC",
        "accounts_paged",
        "admin",
        "faults",
        "x".repeat(300),
        "",
        "blockchains",
        "assets",
      ];
      const bodies = [
        "",
        "{",
        "[]",
        "null",
        '{"operation":"TRANSFER"}',
        "\u0000\u0001",
        "🙂".repeat(50),
        JSON.stringify({ a: "b".repeat(5000) }),
      ];
      for (let i = 0; i < 300; i++) {
        const path = "/" + Array.from({ length: 1 + rand(5) }, () => pick(segs)).join("/") +
          (rand(3) === 0
            ? `?limit=${pick(["-1", "x", "1", "1e9"])}&after=${pick(["%", "YQ", ""])}`
            : "");
        const method = pick(["GET", "POST", "PATCH", "DELETE", "PUT"]);
        const headers: Record<string, string> = {};
        if (rand(2)) headers["X-API-Key"] = rand(2) ? fx.emu.apiKey : "nope";
        if (rand(2)) {
          headers["Authorization"] = pick(["Bearer", "Bearer a.b.c", "Basic x", "Bearer ..."]);
        }
        if (rand(3) === 0) headers["Idempotency-Key"] = "k" + rand(4);
        const res = await fetch(fx.emu.apiBaseUrl + path, {
          method,
          headers,
          body: method === "GET" ? undefined : pick(bodies),
        });
        await res.body?.cancel();
        assert.ok(res.status < 500, `${method} ${path} -> ${res.status}`);
        assert.ok(res.headers.get("x-request-id"), `${method} ${path} has a request id`);
      }
      assert.equal((await fx.api("GET", "/v1/vault/accounts/0")).status, 200);
    });

    await t.step(
      "200 random authenticated transaction requests get 200 or 400, never 5xx",
      async () => {
        let seed = 7;
        const rand = (n: number) => {
          seed = (seed * 1103515245 + 12345) % 2 ** 31;
          return seed % n;
        };
        const values = (): unknown =>
          [null, true, 0, -1, 1e308, "", "x", "0x0", "1.5", "-2", [], {}, {
            type: "VAULT_ACCOUNT",
            id: "0",
          }, {
            type: "ONE_TIME_ADDRESS",
            oneTimeAddress: { address: ACCOUNT1 },
          }, {
            rawMessageData: {
              messages: [{ content: rand(2) ? "zz" : { types: 1 }, type: "EIP712" }],
            },
          }][
            rand(15)
          ];
        const keys = [
          "operation",
          "assetId",
          "source",
          "destination",
          "amount",
          "extraParameters",
          "gasLimit",
          "maxFee",
          "priorityFee",
          "fee",
          "feeLevel",
          "externalTxId",
          "note",
        ];
        for (let i = 0; i < 200; i++) {
          const body: Record<string, unknown> = {
            assetId: asset,
            source: { type: "VAULT_ACCOUNT", id: "9" },
          };
          for (let k = 0; k < 1 + rand(5); k++) body[keys[rand(keys.length)]] = values();
          if (rand(2)) {
            body.operation = ["TRANSFER", "CONTRACT_CALL", "TYPED_MESSAGE", "RAW"][rand(4)];
          }
          const r = await fx.api("POST", "/v1/transactions", { body });
          assert.ok(r.status === 200 || r.status === 400, `${JSON.stringify(body)} -> ${r.status}`);
        }
      },
    );

    await t.step("requests with bad values are 400 and name the value", async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [transfer(asset, "0", ACCOUNT1, "1e3"), /amount/],
        [transfer("BTC", "0", ACCOUNT1, "1"), /assetId/],
        [transfer(asset, "0", "0x1234", "1"), /address/],
        [transfer(asset, "0", ACCOUNT1, "1", { feeLevel: "FAST" }), /feeLevel/],
        [transfer(asset, "0", ACCOUNT1, "1", { maxFee: "2" }), /priorityFee/],
      ];
      for (const [body, why] of cases) {
        const r = await fx.api("POST", "/v1/transactions", { body });
        assert.equal(r.status, 400);
        assert.match(String((r.data as Record<string, unknown>).message), why);
      }
    });

    await t.step("the same POST twice with one Idempotency-Key makes one transaction", async () => {
      const nonceBefore = await chain.getTransactionCount({ address: ACCOUNT3 });
      const body = transfer(asset, "3", ACCOUNT1, "0.5");
      const key = crypto.randomUUID();
      const a = await fx.api("POST", "/v1/transactions", { body, idempotencyKey: key });
      const b = await fx.api("POST", "/v1/transactions", { body, idempotencyKey: key });
      assert.equal(a.status, 200);
      assert.equal(b.status, 200);
      assert.deepEqual(b.data, a.data);
      const id = (a.data as Record<string, string>).id;
      await fx.waitTx(id);
      const mine = (await fx.api<Record<string, unknown>[]>("GET", "/v1/transactions")).data
        .filter((t) => (t.source as Record<string, string>).id === "3");
      assert.equal(mine.length, 1);
      assert.equal(await chain.getTransactionCount({ address: ACCOUNT3 }), nonceBefore + 1);
      // a different key is a new transaction
      const c = await fx.api("POST", "/v1/transactions", {
        body,
        idempotencyKey: crypto.randomUUID(),
      });
      assert.notEqual((c.data as Record<string, string>).id, id);
      await fx.waitTx((c.data as Record<string, string>).id);
    });

    await t.step("a reused externalTxId is 400; the first is found by it", async () => {
      const body = transfer(asset, "0", ACCOUNT1, "0.001", { externalTxId: "order-77" });
      const a = await fx.api("POST", "/v1/transactions", { body });
      assert.equal(a.status, 200);
      const b = await fx.api("POST", "/v1/transactions", { body });
      assert.equal(b.status, 400);
      assert.match(String((b.data as Record<string, unknown>).message), /externalTxId/);
      const found = await fx.api("GET", "/v1/transactions/external_tx_id/order-77");
      assert.equal(found.data.id, (a.data as Record<string, string>).id);
      const missing = await fx.api("GET", "/v1/transactions/external_tx_id/nope");
      assert.equal(missing.status, 404);
    });

    await t.step("a transfer walks the statuses and emits the events", async () => {
      events.length = 0;
      const r = await fx.api("POST", "/v1/transactions", {
        body: transfer(asset, "1", ACCOUNT0, "0.1"),
      });
      const id = (r.data as Record<string, string>).id;
      const tx = await fx.waitTx(id);
      assert.equal(tx.status, "COMPLETED");
      const mine = events.filter((e) => e.resourceId === id);
      assert.equal(mine[0].eventType, "transaction.created");
      assert.deepEqual(
        mine.slice(1).map((e) => (e.data as Record<string, unknown>).status),
        ["PENDING_SIGNATURE", "BROADCASTING", "CONFIRMING", "COMPLETED"],
      );
      assert.ok(mine.slice(1).every((e) => e.eventType === "transaction.status.updated"));
      const receipt = await chain.getTransactionReceipt({ hash: tx.txHash as Hex });
      assert.equal(
        (tx.blockInfo as Record<string, string>).blockHeight,
        receipt.blockNumber.toString(),
      );
    });

    await t.step("explicit fees and gas limit are used as given", async () => {
      const r = await fx.api("POST", "/v1/transactions", {
        body: transfer(asset, "1", ACCOUNT0, "0.1", {
          maxFee: "7.5",
          priorityFee: "1.5",
          gasLimit: "30000",
        }),
      });
      const tx = await fx.waitTx((r.data as Record<string, string>).id);
      assert.equal(tx.status, "COMPLETED");
      const onChain = await chain.getTransaction({ hash: tx.txHash as Hex });
      assert.equal(onChain.gas, 30000n);
      assert.equal(onChain.maxFeePerGas, 7_500_000_000n);
      assert.equal(onChain.maxPriorityFeePerGas, 1_500_000_000n);
      const legacy = await fx.api("POST", "/v1/transactions", {
        body: transfer(asset, "1", ACCOUNT0, "0.1", { fee: "9", gasLimit: "25000" }),
      });
      const lt = await fx.waitTx((legacy.data as Record<string, string>).id);
      const lOnChain = await chain.getTransaction({ hash: lt.txHash as Hex });
      assert.equal(lOnChain.gasPrice, 9_000_000_000n);
      assert.equal(lOnChain.type, "legacy");
    });

    await t.step("a transfer above the balance ends FAILED with INSUFFICIENT_FUNDS", async () => {
      const r = await fx.api("POST", "/v1/transactions", {
        body: transfer(asset, "4", ACCOUNT0, "1000000"),
      });
      const tx = await fx.waitTx((r.data as Record<string, string>).id);
      assert.equal(tx.status, "FAILED");
      assert.equal(tx.subStatus, "INSUFFICIENT_FUNDS");
    });

    await t.step(
      "a call that reverts on estimate ends FAILED with SMART_CONTRACT_EXECUTION_FAILED",
      async () => {
        const d = await fx.api("POST", "/v1/transactions", {
          body: {
            operation: "CONTRACT_CALL",
            assetId: asset,
            source: { type: "VAULT_ACCOUNT", id: "0" },
            destination: { type: "ONE_TIME_ADDRESS", oneTimeAddress: { address: "0x0" } },
            amount: "0",
            extraParameters: { contractCallData: STORE_CONTRACT_INIT },
          },
        });
        const deployed = await fx.waitTx((d.data as Record<string, string>).id);
        assert.equal(deployed.status, "COMPLETED");
        const receipt = await chain.getTransactionReceipt({ hash: deployed.txHash as Hex });
        const contract = receipt.contractAddress!;
        // empty calldata makes the contract revert
        const r = await fx.api("POST", "/v1/transactions", {
          body: transfer(asset, "0", contract, "0"),
        });
        const tx = await fx.waitTx((r.data as Record<string, string>).id);
        assert.equal(tx.status, "FAILED");
        assert.equal(tx.subStatus, "SMART_CONTRACT_EXECUTION_FAILED");
        // with a gas limit the estimate is skipped: the revert happens on chain
        const r2 = await fx.api("POST", "/v1/transactions", {
          body: transfer(asset, "0", contract, "0", { gasLimit: "50000" }),
        });
        const tx2 = await fx.waitTx((r2.data as Record<string, string>).id);
        assert.equal(tx2.status, "FAILED");
        assert.equal(tx2.subStatus, "SMART_CONTRACT_EXECUTION_FAILED");
        assert.equal(
          (await chain.getTransactionReceipt({ hash: tx2.txHash as Hex })).status,
          "reverted",
        );
      },
    );

    await t.step("concurrent creates from one account never reuse a nonce", async () => {
      const address = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65"; // account 4
      const start = await chain.getTransactionCount({ address });
      const created = await Promise.all(
        Array.from(
          { length: 25 },
          () =>
            fx.api("POST", "/v1/transactions", { body: transfer(asset, "4", ACCOUNT0, "0.001") }),
        ),
      );
      const txs = await Promise.all(
        created.map((c) => fx.waitTx((c.data as Record<string, string>).id)),
      );
      assert.ok(
        txs.every((t) => t.status === "COMPLETED"),
        JSON.stringify(txs.map((t) => t.subStatus)),
      );
      const nonces = txs.map((t) => Number(t.nonce)).sort((a, b) => a - b);
      assert.deepEqual(nonces, Array.from({ length: 25 }, (_, i) => start + i));
      assert.equal(await chain.getTransactionCount({ address }), start + 25);
    });

    await t.step("the handler answers in-process, without the network", async () => {
      const token = new URL(fx.emu.consoleUrl).searchParams.get("token")!;
      const res = await fx.emu.handler(
        new Request("http://127.0.0.1/console/api/overview", {
          // a request in-process has no Host header unless given: the console wants a loopback one
          headers: { host: "127.0.0.1", "x-console-token": token },
        }),
      );
      assert.equal(res.status, 200);
      const overview = await res.json();
      assert.ok(overview.transactions.some((t: { status: string }) => t.status === "COMPLETED"));
      const denied = await fx.emu.handler(new Request("http://in-process/v1/transactions"));
      assert.equal(denied.status, 401);
      assert.ok(denied.headers.get("x-request-id"));
    });

    await t.step("vault listing pages both ways with cursors", async () => {
      const first = await fx.api("GET", "/v1/vault/accounts_paged", {
        query: { limit: 4, orderBy: "DESC" },
      });
      const ids = (first.data.accounts as Record<string, string>[]).map((a) => a.id);
      assert.deepEqual(ids, ["9", "8", "7", "6"]);
      const paging = first.data.paging as Record<string, string>;
      assert.equal(paging.before, undefined);
      const second = await fx.api("GET", "/v1/vault/accounts_paged", {
        query: { limit: 4, orderBy: "DESC", after: paging.after },
      });
      assert.deepEqual((second.data.accounts as Record<string, string>[]).map((a) => a.id), [
        "5",
        "4",
        "3",
        "2",
      ]);
      const back = await fx.api("GET", "/v1/vault/accounts_paged", {
        query: {
          limit: 4,
          orderBy: "DESC",
          before: (second.data.paging as Record<string, string>).before,
        },
      });
      assert.deepEqual((back.data.accounts as Record<string, string>[]).map((a) => a.id), ids);
      const other = await fx.api("GET", "/v1/vault/accounts_paged", { query: { assetId: "BTC" } });
      assert.deepEqual(other.data.accounts, []);
      const bad = await fx.api("GET", "/v1/vault/accounts_paged", { query: { after: "garbage!" } });
      assert.equal(bad.status, 400);
      assert.equal((await fx.api("GET", "/v1/vault/accounts/10")).status, 404);
    });
    await t.step("nothing above hit an internal error", () => {
      assert.deepEqual(fx.logs.filter((l) => /internal error/i.test(l)), []);
    });
  } finally {
    await fx.stop();
  }
});
