import assert from "node:assert/strict";
import { NotificationTail } from "../../lib/platform/mod.ts";
import { clientFor, startRecordingServer } from "../support/recording_server.ts";

const SINCE = Date.parse("2026-01-01T00:00:00Z");

function notification(id: string, status: string, createdAt: number, updatedAt: number) {
  return { id, status, eventType: "transaction.created", resourceId: "r1", createdAt, updatedAt };
}

Deno.test("NotificationTail reports new notifications, then each status change once", async () => {
  const srv = startRecordingServer({ status: 200, body: { data: [], next: null } });
  try {
    const client = await clientFor(srv.url);
    const older = notification("n0", "FAILED", SINCE - 60_000, SINCE + 1_000);
    const n1 = notification("n1", "IN_PROGRESS", SINCE + 2_000, SINCE + 2_000);
    const n1Done = notification("n1", "COMPLETED", SINCE + 2_000, SINCE + 9_000);
    const tooOld = notification("n9", "FAILED", SINCE - 90_000, SINCE - 30_000);
    srv.script.push(
      { status: 200, body: { data: [n1, older, tooOld], next: null } },
      { status: 200, body: { data: [n1Done, n1, older], next: null } },
      { status: 200, body: { data: [n1Done, older], next: null } },
    );
    const tail = new NotificationTail(client, "w1", SINCE);
    const first = await tail.poll();
    assert.deepEqual(first.map((l) => [l.change, l.id, l.status]), [
      ["updated", "n0", "FAILED"],
      ["created", "n1", "IN_PROGRESS"],
    ]);
    const second = await tail.poll();
    assert.deepEqual(second.map((l) => [l.change, l.id, l.previousStatus, l.status]), [
      ["status", "n1", "IN_PROGRESS", "COMPLETED"],
    ]);
    assert.equal(second[0].time, new Date(SINCE + 9_000).toISOString());
    assert.deepEqual(await tail.poll(), []);
    const query = new URLSearchParams(srv.requests[0].search);
    assert.equal(query.get("sortBy"), "updatedAt");
    assert.equal(query.get("order"), "DESC");
  } finally {
    await srv.close();
  }
});
