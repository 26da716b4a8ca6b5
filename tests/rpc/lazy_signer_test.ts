import assert from "node:assert/strict";
import { LazySigner } from "../../lib/rpc/lazy_signer.ts";
import type { Signer } from "../../lib/rpc/methods.ts";

function fakeSigner(calls: string[]): Signer {
  return {
    accounts: () => Promise.resolve(["0x" + "11".repeat(20)]),
    sendTransaction: (tx) => Promise.resolve(`sent ${JSON.stringify(tx)}`),
    signMessage: (a, d) => Promise.resolve(`${a}:${d}`).finally(() => calls.push("signMessage")),
    signTypedData: (a) => Promise.resolve(`typed ${a}`),
  };
}

Deno.test("LazySigner loads nothing until the first call, then once for concurrent calls", async () => {
  const calls: string[] = [];
  let loads = 0;
  const signer = new LazySigner(async () => {
    loads++;
    await Promise.resolve();
    return fakeSigner(calls);
  });
  assert.equal(loads, 0);
  const [accounts, sent, signed, typed] = await Promise.all([
    signer.accounts(),
    signer.sendTransaction({ to: "0x1" }),
    signer.signMessage("0xa", "0xbeef"),
    signer.signTypedData("0xa", {}),
  ]);
  assert.equal(loads, 1);
  assert.deepEqual(accounts, ["0x" + "11".repeat(20)]);
  assert.equal(sent, 'sent {"to":"0x1"}');
  assert.equal(signed, "0xa:0xbeef");
  assert.equal(typed, "typed 0xa");
  await signer.accounts();
  assert.equal(loads, 1);
  assert.deepEqual(calls, ["signMessage"]);
});

Deno.test("LazySigner: a failed load fails that call and is retried on the next", async () => {
  let loads = 0;
  const signer = new LazySigner(() => {
    loads++;
    return loads === 1 ? Promise.reject(new Error("load failed")) : Promise.resolve(fakeSigner([]));
  });
  await assert.rejects(signer.accounts(), /load failed/);
  assert.deepEqual(await signer.accounts(), ["0x" + "11".repeat(20)]);
  assert.equal(loads, 2);
});
