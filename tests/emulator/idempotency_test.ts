import assert from "node:assert/strict";
import { Store } from "../../lib/emulator/store.ts";
import { Idempotency } from "../../lib/emulator/http/idempotency.ts";
import type { Reply } from "../../lib/emulator/http/reply.ts";
import { isRetryableStatus } from "../../lib/platform/mod.ts";

/** Runs one key twice; the work answers `first`, then 201. Returns the second answer's status. */
async function secondAnswer(first: number): Promise<number> {
  const store = Store.open();
  try {
    const once = new Idempotency(store.db, () => 0);
    const answers = [first, 201];
    const work = (): Promise<Reply> => Promise.resolve({ status: answers.shift()!, body: {} });
    await once.run("k", "POST", "/v1/x", work);
    return (await once.run("k", "POST", "/v1/x", work)).status;
  } finally {
    store.close();
  }
}

Deno.test("an answer worth a retry (408, 429, 5xx) is not kept: the retry runs again", async () => {
  for (const status of [408, 429, 500, 503]) {
    assert.equal(isRetryableStatus(status), true);
    assert.equal(await secondAnswer(status), 201, `status ${status}`);
  }
});

Deno.test("any other answer is kept and given again to the same key", async () => {
  for (const status of [200, 400, 404, 409]) {
    assert.equal(isRetryableStatus(status), false);
    assert.equal(await secondAnswer(status), status, `status ${status}`);
  }
});
