/**
 * Proof before adoption (`send_proof.ts`) on the records a platform and a node answer, and the
 * race the slot rule narrows (`send_slot.ts`): another process's send for the same account created
 * at the same instant as this bridge's, against the real emulator and anvil. The rival's create is
 * made, through the platform's API, just before the bridge's own create reaches the platform (a
 * client in front of the bridge's one); the bridge sees it right after its create, cancels its own
 * while it is still cancellable and refuses the send naming the rival.
 */
import assert from "node:assert/strict";
import { startFixture } from "../support/emulator_fixture.ts";
import { anvilCall } from "../support/rpc_stack.ts";
import { CustodySigner } from "../../lib/rpc/custody.ts";
import { SendSlots } from "../../lib/rpc/send_slot.ts";
import { sendIdentity } from "../../lib/rpc/send_identity.ts";
import {
  chainDifferences,
  NOT_ON_CHAIN,
  platformDifferences,
  weiOf,
} from "../../lib/rpc/send_proof.ts";
import {
  createTransaction,
  type PlatformClient,
  type Transaction,
  type TransactionRequest,
} from "../../lib/platform/mod.ts";

const FROM = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const TO = "0x000000000000000000000000000000000000bEEF";

const body: TransactionRequest = {
  operation: "CONTRACT_CALL",
  assetId: "ETH_TEST",
  source: { type: "VAULT_ACCOUNT", id: "0" },
  destination: { type: "ONE_TIME_ADDRESS", oneTimeAddress: { address: TO } },
  amount: "0.000000000000000034",
  extraParameters: { contractCallData: "0xd09de08a" },
};

const record = (extra: Record<string, unknown> = {}): Transaction => ({
  id: "tx-1",
  status: "PENDING_AUTHORIZATION",
  externalTxId: "service-rpc-abc",
  source: { type: "VAULT_ACCOUNT", id: "0" },
  sourceAddress: FROM,
  assetId: "ETH_TEST",
  destinationAddress: TO.toLowerCase(),
  amountInfo: { amount: "0.000000000000000034" },
  extraParameters: { contractCallData: "D09DE08A" },
  ...extra,
});

Deno.test("weiOf reads the platform's ether amounts exactly", () => {
  assert.equal(weiOf("1.5"), 1_500_000_000_000_000_000n);
  assert.equal(weiOf("0.000000000000000034"), 34n);
  assert.equal(weiOf(2), 2_000_000_000_000_000_000n);
  assert.equal(weiOf("0.0000000000000000001"), undefined, "more than 18 decimals");
  assert.equal(weiOf("x"), undefined);
});

Deno.test("a found record that is the request's has no difference; fees are not compared", () => {
  assert.deepEqual(platformDifferences(record({ maxFee: "99" }), body, FROM), []);
});

Deno.test("each field that differs is named", () => {
  const differs = (extra: Record<string, unknown>) =>
    platformDifferences(record(extra), body, FROM).join("; ");
  assert.match(
    differs({ source: { type: "VAULT_ACCOUNT", id: "1" } }),
    /source vault account 1 \(asked 0\)/,
  );
  assert.match(
    differs({ destinationAddress: "0x000000000000000000000000000000000000dead" }),
    /destination 0x0+dead/,
  );
  assert.match(
    differs({ amountInfo: { amount: "2" } }),
    /amount 2 \(asked 0\.000000000000000034\)/,
  );
  assert.match(differs({ assetId: "ETH" }), /asset ETH \(asked ETH_TEST\)/);
  assert.match(differs({ extraParameters: { contractCallData: "0x00" } }), /call data of 1 bytes/);
  assert.match(differs({ source: undefined, sourceAddress: undefined }), /no source shown/);
});

Deno.test("the chain's transaction is compared field by field; a missing one is not on the chain", () => {
  const chainTx = {
    from: FROM.toLowerCase(),
    to: TO.toLowerCase(),
    nonce: "0x7",
    value: "0x22",
    input: "0xd09de08a",
  };
  assert.deepEqual(chainDifferences(chainTx, body, FROM, 7n), []);
  assert.deepEqual(chainDifferences(null, body, FROM, 7n), [NOT_ON_CHAIN]);
  assert.match(
    chainDifferences({ ...chainTx, nonce: "0x8" }, body, FROM, 7n)[0],
    /nonce 8 \(asked 7\)/,
  );
  assert.match(chainDifferences({ ...chainTx, from: TO }, body, FROM, 7n)[0], /sender/);
  assert.match(chainDifferences({ ...chainTx, input: "0x" }, body, FROM, 7n)[0], /input data/);
});

Deno.test("an adopted transaction whose hash has not reached the node stops being waited for when the bridge stops", async () => {
  // adoption() never calls the platform: no client is needed (a stand-in that throws if used)
  const client = new Proxy({}, {
    get() {
      throw new Error("the platform was called");
    },
  }) as PlatformClient;
  let lookups = 0;
  const slots = new SendSlots({
    client,
    chainTransaction: () => {
      lookups++;
      return Promise.resolve(null); // the node does not have the hash (yet)
    },
  });
  const adoption = slots.adoption(sendIdentity(31337n, FROM, 7n, body), body);
  const stop = new AbortController();
  const reason = new Error("the bridge is stopping");
  setTimeout(() => stop.abort(reason), 600);
  const t0 = performance.now();
  await assert.rejects(
    adoption.landed(record({ status: "COMPLETED", txHash: "0x" + "ab".repeat(32) }), stop.signal),
    (e) => e === reason,
  );
  const waited = performance.now() - t0;
  assert.ok(waited < 2_000, `waited ${waited} ms after the stop (it waits up to 15 s otherwise)`);
  assert.ok(lookups >= 2, "it looked for the hash on the node while it waited");
});

Deno.test("another process creates a send for the same account at the same instant: the bridge cancels its own and refuses, naming the rival", async () => {
  const fx = await startFixture();
  try {
    await fx.admin("POST", "/faults", { kind: "hold" }); // both stay in flight, unsigned
    let rival: string | undefined;
    // The bridge's platform client, with another process's create made just before its own.
    const racing = new Proxy(fx.client, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop !== "request") return typeof value === "function" ? value.bind(target) : value;
        return async (method: string, path: string, options: unknown) => {
          if (method === "POST" && path === "/v1/transactions" && rival === undefined) {
            rival = (await createTransaction(target, {
              operation: "TRANSFER",
              assetId: fx.emu.assetId,
              source: { type: "VAULT_ACCOUNT", id: "0" },
              destination: { type: "ONE_TIME_ADDRESS", oneTimeAddress: { address: TO } },
              amount: "0.000000000000000001",
            })).id;
          }
          return await (value as PlatformClient["request"]).call(
            target,
            method as "POST",
            path,
            options as never,
          );
        };
      },
    });
    const chainId = BigInt(await anvilCall(fx.anvil.url, "eth_chainId") as string);
    const signer = new CustodySigner({
      client: racing,
      assetId: fx.emu.assetId,
      chainId,
      vaultAccountIds: ["0"],
      pendingNonce: async (a) =>
        BigInt(await anvilCall(fx.anvil.url, "eth_getTransactionCount", [a, "pending"]) as string),
    });
    const n = BigInt(await anvilCall(fx.anvil.url, "eth_getTransactionCount", [FROM, "pending"]));
    let refused: Error | undefined;
    // (bounded: a bridge that does not see the rival would wait for approval, held, forever)
    await signer.sendTransaction(
      { from: FROM, to: TO, value: "0x5", nonce: `0x${n.toString(16)}` },
      AbortSignal.timeout(20_000),
    )
      .catch((e) => refused = e);
    assert.ok(rival, "the rival was created");
    assert.ok(refused, "the send was refused");
    assert.match(
      refused.message,
      new RegExp(
        `nonce ${n} of ${FROM} was taken at the same moment by platform transaction ${rival} .* was cancelled and nothing was sent`,
      ),
    );
    const mine = (refused as unknown as { data: { txId: string } }).data.txId;
    const { data } = await fx.api<{ status: string }>("GET", `/v1/transactions/${mine}`);
    assert.equal(data.status, "CANCELLED");
  } finally {
    await fx.admin("DELETE", "/faults");
    await fx.stop();
  }
});
