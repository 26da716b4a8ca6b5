import assert from "node:assert/strict";
import { resendKey, resendOneByOne, StatusTally } from "../../lib/platform/mod.ts";
import { clientFor, startRecordingServer } from "../support/recording_server.ts";

async function* listing(n: number) {
  for (let i = 1; i <= n; i++) yield { id: `n${i}`, status: i % 2 ? "FAILED" : "COMPLETED" };
}

Deno.test("resendOneByOne resends each listed notification once, with its run-derived key", async () => {
  const srv = startRecordingServer({ status: 202 });
  try {
    srv.script.push(
      { status: 202 },
      { status: 202, headers: { "Idempotent-Replayed": "true" } },
      { status: 409, body: { message: "no" } },
    );
    const progress: number[] = [];
    const r = await resendOneByOne(await clientFor(srv.url), {
      webhookId: "w1",
      listed: listing(5),
      runKey: "run",
      concurrency: 1,
      max: 10,
      onProgress: (done) => void progress.push(done),
    });
    assert.deepEqual(
      { taken: r.taken, resent: r.resent, replayed: r.replayed, refused: r.refused },
      { taken: 5, resent: 3, replayed: 1, refused: 1 },
    );
    assert.match(r.firstRefused ?? "", /^n3: /);
    assert.deepEqual(r.statuses, { COMPLETED: 2, FAILED: 3 });
    assert.equal(r.overMax, false);
    assert.equal(r.fatal, undefined);
    assert.deepEqual(progress, [1, 2, 3, 4, 5]);
    assert.deepEqual(
      srv.requests.map((q) => q.path),
      [1, 2, 3, 4, 5].map((i) => `/v1/webhooks/w1/notifications/n${i}/resend`),
    );
    for (const [i, q] of srv.requests.entries()) {
      assert.equal(q.headers.get("idempotency-key"), await resendKey("run", "w1", `n${i + 1}`));
    }
  } finally {
    await srv.close();
  }
});

Deno.test("resendOneByOne stops at max and says the listing held more", async () => {
  const srv = startRecordingServer({ status: 202 });
  try {
    const r = await resendOneByOne(await clientFor(srv.url), {
      webhookId: "w1",
      listed: listing(50),
      runKey: "run",
      concurrency: 4,
      max: 3,
    });
    assert.equal(r.overMax, true);
    assert.equal(r.resent, 3);
    assert.equal(srv.requests.length, 3);
  } finally {
    await srv.close();
  }
});

async function* broken() {
  yield { id: "n1", status: "FAILED" };
  throw new Error("page 2 failed");
}

Deno.test("resendOneByOne ends on a listing error and reports it as fatal", async () => {
  const srv = startRecordingServer({ status: 202 });
  try {
    const r = await resendOneByOne(await clientFor(srv.url), {
      webhookId: "w1",
      listed: broken(),
      runKey: "run",
      concurrency: 2,
      max: 10,
    });
    assert.equal((r.fatal as Error).message, "page 2 failed");
    assert.equal(r.resent, 1);
  } finally {
    await srv.close();
  }
});

Deno.test("StatusTally counts the vocabulary's statuses in its order and ignores other words", () => {
  const tally = new StatusTally();
  for (const s of ["ON_HOLD", "FAILED", "__proto__", "FAILED", "NEW_STATUS", "COMPLETED"]) {
    tally.add(s);
  }
  assert.deepEqual(Object.entries(tally.counts()), [
    ["COMPLETED", 1],
    ["FAILED", 2],
    ["ON_HOLD", 1],
  ]);
});
