import assert from "node:assert/strict";
import { toTransactionRequest } from "../../lib/rpc/transaction_request.ts";
import { RpcError } from "../../lib/rpc/protocol.ts";
import { pollDelay } from "../../lib/rpc/platform_transaction.ts";

const opts = { assetId: "ETH_TEST5", chainId: 11155111n };
const FROM = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

Deno.test("a plain value send is a TRANSFER with the amount in ether", () => {
  const r = toTransactionRequest({ from: FROM, to: TO, value: "0x14d1120d7b160000" }, opts);
  assert.equal(r.operation, "TRANSFER");
  assert.equal(r.amount, "1.5");
  assert.deepEqual(r.destination, { type: "ONE_TIME_ADDRESS", oneTimeAddress: { address: TO } });
  assert.equal(r.feeLevel, "MEDIUM");
  assert.equal(r.extraParameters, undefined);
});

Deno.test("forge's creation (to: null, input, EIP-1559 fees, nonce, chainId) maps to CONTRACT_CALL to 0x0", () => {
  const r = toTransactionRequest({
    from: FROM,
    to: null,
    input: "0x6080",
    gas: "0x5208",
    maxFeePerGas: "0x77359401", // 2000000001 wei
    maxPriorityFeePerGas: "0x3b9aca00", // 1 gwei
    nonce: "0x3",
    chainId: "0xaa36a7",
    type: "0x2",
  }, opts);
  assert.equal(r.operation, "CONTRACT_CALL");
  assert.equal(r.destination?.oneTimeAddress.address, "0x0");
  assert.deepEqual(r.extraParameters, { contractCallData: "0x6080" });
  assert.equal(r.gasLimit, "21000");
  assert.equal(r.maxFee, "2.000000001");
  assert.equal(r.priorityFee, "1");
  assert.equal(r.feeLevel, undefined);
  assert.equal(r.amount, "0");
  assert.ok(!("nonce" in r) && !("chainId" in r));
});

Deno.test("a legacy gasPrice becomes fee in gwei; data on a call is contractCallData", () => {
  const r = toTransactionRequest(
    { from: FROM, to: TO, data: "0xd09de08a", gasPrice: "0x3b9aca00" },
    { ...opts, note: "deploy v2" },
  );
  assert.equal(r.operation, "CONTRACT_CALL");
  assert.equal(r.fee, "1");
  assert.equal(r.note, "deploy v2");
});

Deno.test("another chain's chainId, a bad to, bad data, or a creation without code are refused", () => {
  const bad = [
    { from: FROM, to: TO, chainId: "0x1" },
    { from: FROM, to: "0x1234" },
    { from: FROM, to: TO, data: "xyz" },
    { from: FROM },
    { from: FROM, to: TO, data: "0x01", input: "0x02" },
    { from: FROM, to: TO, value: "-1" },
  ];
  for (const tx of bad) {
    assert.throws(
      () => toTransactionRequest(tx, opts),
      (e) => e instanceof RpcError && e.code === -32602,
    );
  }
});

Deno.test("polling starts at 5 ms (as the README says), doubles each poll, caps at 2 s; a fixed interval overrides", () => {
  const delays = Array.from({ length: 12 }, (_, i) => pollDelay(i));
  assert.deepEqual(delays, [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2000, 2000, 2000]);
  assert.equal(pollDelay(1000), 2000);
  assert.equal(pollDelay(5, 1000), 1000);
  assert.equal(pollDelay(0, 50), 50);
});
