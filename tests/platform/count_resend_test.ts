import assert from "node:assert/strict";
import { countResendByResource } from "../../lib/platform/mod.ts";
import { clientFor, startRecordingServer } from "../support/recording_server.ts";

const NOW = Date.parse("2026-02-01T00:00:00Z");
const n = (id: string) => ({
  id,
  status: "FAILED",
  eventType: "transaction.created",
  createdAt: NOW,
  updatedAt: NOW,
});

Deno.test("countResendByResource lists the resource's last 30 days, every page, without the excluded statuses", async () => {
  const srv = startRecordingServer({ status: 200, body: { data: [], next: null } });
  try {
    srv.script.push(
      { status: 200, body: { data: [n("a"), n("b")], next: "c2" } },
      { status: 200, body: { data: [n("c")], next: null } },
    );
    const client = await clientFor(srv.url);
    assert.equal(await countResendByResource(client, "w1", "tx1", ["COMPLETED"], NOW), 3);
    const q = new URLSearchParams(srv.requests[0].search);
    assert.equal(q.get("resourceId"), "tx1");
    assert.equal(Number(q.get("startTime")), NOW - 30 * 86_400_000);
    assert.deepEqual(q.getAll("statuses"), ["FAILED", "IN_PROGRESS", "ON_HOLD"]);
    assert.equal(new URLSearchParams(srv.requests[1].search).get("pageCursor"), "c2");
    // nothing excluded: no status filter; everything excluded: no call at all
    assert.equal(await countResendByResource(client, "w1", "tx1", [], NOW), 0);
    assert.deepEqual(new URLSearchParams(srv.requests[2].search).getAll("statuses"), []);
    const calls = srv.requests.length;
    const all = ["COMPLETED", "FAILED", "IN_PROGRESS", "ON_HOLD"];
    assert.equal(await countResendByResource(client, "w1", "tx1", all, NOW), 0);
    assert.equal(srv.requests.length, calls);
  } finally {
    await srv.close();
  }
});
