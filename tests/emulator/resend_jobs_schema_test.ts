/**
 * A state file made before resend-by-query jobs (its `wh_jobs` table
 * without `kind` and `statuses`) opens, keeps its resend-failed jobs as
 * such, and stores by-query jobs next to them.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { WebhookStore } from "../../lib/emulator/webhooks/store.ts";

Deno.test("an old state file's jobs table gains kind and statuses", () => {
  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE TABLE wh_jobs (id TEXT PRIMARY KEY, webhook_id TEXT NOT NULL,
    status TEXT NOT NULL, processed INTEGER NOT NULL, total INTEGER NOT NULL,
    pending TEXT NOT NULL, created_at INTEGER NOT NULL)`);
  db.prepare("INSERT INTO wh_jobs VALUES ('j1', 'w1', 'QUEUED', 0, 2, '[1,2]', 5)").run();
  const store = new WebhookStore(db);
  const old = store.getJob("w1", "j1", "failed");
  assert.deepEqual(old?.statuses, ["FAILED"]);
  assert.equal(store.getJob("w1", "j1", "query"), undefined);
  store.saveJob({
    id: "j2",
    webhookId: "w1",
    kind: "query",
    statuses: ["COMPLETED", "ON_HOLD"],
    status: "QUEUED",
    processed: 0,
    total: 1,
    pending: [3],
    createdAt: 6,
  });
  assert.deepEqual(store.getJob("w1", "j2", "query")?.statuses, ["COMPLETED", "ON_HOLD"]);
  assert.deepEqual(store.unfinishedJobs().map((j) => [j.id, j.kind]), [["j1", "failed"], [
    "j2",
    "query",
  ]]);
  // opening again is a no-op
  new WebhookStore(db);
  db.close();
});
