import assert from "node:assert/strict";
import { followResendJob } from "../../lib/platform/mod.ts";
import { clientFor, startRecordingServer } from "../support/recording_server.ts";

const job = (status: string, processed: number) => ({
  status: 200,
  body: { jobId: "j1", status, processed, total: 2 },
});

Deno.test("followResendJob polls the query job until it is COMPLETED, reporting each poll", async () => {
  const srv = startRecordingServer(job("FAILED", 0));
  try {
    srv.script.push(job("IN_PROGRESS", 0), job("IN_PROGRESS", 1), job("COMPLETED", 2));
    const seen: string[] = [];
    const r = await followResendJob(
      await clientFor(srv.url),
      { webhookId: "w1", jobId: "j1", kind: "query" },
      { maxDelayMs: 200, onPoll: (j) => void seen.push(`${j.status} ${j.processed}`) },
    );
    assert.equal(r.stalled, false);
    assert.equal(r.job.status, "COMPLETED");
    assert.deepEqual(seen, ["IN_PROGRESS 0", "IN_PROGRESS 1", "COMPLETED 2"]);
    assert.deepEqual(
      new Set(srv.requests.map((q) => q.path)),
      new Set(["/v1/webhooks/w1/notifications/resend_by_query/jobs/j1"]),
    );
  } finally {
    await srv.close();
  }
});

Deno.test("followResendJob gives up a job that makes no progress for waitTimeoutMs", async () => {
  const srv = startRecordingServer(job("IN_PROGRESS", 1));
  try {
    const r = await followResendJob(
      await clientFor(srv.url),
      { webhookId: "w1", jobId: "j1", kind: "failed" },
      { maxDelayMs: 200, waitTimeoutMs: 500 },
    );
    assert.equal(r.stalled, true);
    assert.equal(r.job.processed, 1);
    assert.ok(srv.requests.length >= 2, "polled more than once before giving up");
    assert.ok(srv.requests.every((q) => q.path.endsWith("/resend_failed/jobs/j1")));
  } finally {
    await srv.close();
  }
});
