/**
 * The emulator, a real process, delivers over real HTTP to a real receiver,
 * signs every request, and retries on the schedule of breaker.md §2. The
 * breaker is held off here (`--minAttempts` above any window) so that every
 * series runs to its end; the breaker has its own test file.
 *
 * What only a real process shows is checked here: real answers, a real
 * timeout, a refused connection, the signatures and the log line. The exact
 * gaps (10 s, 30 s, ... 4 h) and every row of §1's table are asserted on
 * virtual time in webhooks_virtual_time_test.ts; here each gap is only bounded
 * from below by the literal delay divided by --timeScale (a retry is never
 * early). No upper bound: on a loaded machine a late timer is not a bug.
 */

import assert from "node:assert/strict";
import { type EmulatorProcess, startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { startReceiver } from "../support/receiver.ts";

const SCALE = 10_000;
// long enough that a loaded machine still answers a 200 in time; each "hang" attempt costs this much
const TIMEOUT_MS = 1000;
/** breaker.md §2, literally: the retry delays in seconds after the k-th failed attempt. */
const DELAYS_SECONDS = [10, 30, 120, 300, 900, 1800, 3600, 7200, 14400];

interface Attempt {
  sentTime: number;
  duration: number;
  responseCode?: number;
  failureReason?: string;
}

async function allAttempts(emu: EmulatorProcess, w: string, n: string): Promise<Attempt[]> {
  const out: Attempt[] = [];
  let cursor: string | undefined;
  do {
    const r = await emu.api<{ data: Attempt[]; next: string | null }>(
      "GET",
      `/v1/webhooks/${w}/notifications/${n}/attempts`,
      { query: { pageSize: 3, pageCursor: cursor } },
    );
    assert.equal(r.status, 200);
    out.push(...r.data.data);
    cursor = r.data.next ?? undefined;
  } while (cursor);
  return out;
}

function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test("each kind of answer is retried or not exactly as breaker.md says, on the scaled schedule", async () => {
  const emu = await startEmulatorOnAnvil([
    "--timeScale",
    String(SCALE),
    "--deliveryTimeout",
    `${TIMEOUT_MS}ms`,
    "--minAttempts",
    "1000000",
  ]);
  const plans: Record<string, number | "hang"> = {
    ok: 200,
    e500: 500,
    e503: 503,
    e429: 429,
    e408: 408,
    e404: 404,
    e302: 302,
    hang: "hang",
  };
  // "hang" hangs on its first and last attempts (a real timeout is retried, and ends the
  // series), 503 in between: ten real timeouts would cost ten seconds and show nothing more
  // (ten TIMED_OUT attempts in a row are on virtual time)
  const hangAt = new Set([0, 9]);
  const rc = startReceiver({
    jwksUrl: emu.ready.jwksUrl,
    script: (n, body) => {
      const path = Object.keys(plans).find((k) => body.webhookId && hooks[k] === body.webhookId);
      if (path === "hang") return hangAt.has(n) ? "hang" : 503;
      return path ? plans[path] : 599;
    },
  });
  // "back" refuses connections for a while (its listener is closed), then answers 200
  const back = startReceiver({ jwksUrl: emu.ready.jwksUrl });
  await back.refuse();
  const hooks: Record<string, string> = {};
  try {
    for (const k of [...Object.keys(plans), "refused", "back"]) {
      const url = k === "refused"
        ? `http://127.0.0.1:${closedPort()}/hook`
        : k === "back"
        ? `${back.url}/back`
        : `${rc.url}/${k}`;
      const r = await emu.api<{ id: string; status: string }>("POST", "/v1/webhooks", {
        body: { url, events: ["transaction.created"], description: k },
      });
      assert.equal(r.status, 201, JSON.stringify(r.data));
      assert.equal(r.data.status, "ENABLED");
      hooks[k] = r.data.id;
    }
    const t = await emu.api<{ data: { id: string; webhookId: string }[] }>(
      "POST",
      "/admin/notifications",
      { body: { eventType: "transaction.created", resourceId: "tx-retry", data: { x: 1 } } },
    );
    assert.equal(t.status, 201);
    assert.equal(t.data.data.length, Object.keys(hooks).length);
    const byHook = new Map(t.data.data.map((n) => [n.webhookId, n.id]));
    const backId = byHook.get(hooks.back)!;
    await waitFor(
      "3 refused attempts",
      async () => (await allAttempts(emu, hooks.back, backId)).length >= 3,
    );
    back.reopen();

    // wait until every notification is final
    const finals = await waitFor(
      "every notification to end",
      async () => {
        const out: Record<string, { status: string }> = {};
        for (const [k, w] of Object.entries(hooks)) {
          const r = await emu.api<{ status: string }>(
            "GET",
            `/v1/webhooks/${w}/notifications/${byHook.get(w)}`,
          );
          if (r.data.status === "IN_PROGRESS") return undefined;
          out[k] = r.data;
        }
        return out;
      },
      60_000,
      100,
    );

    const expectations: Record<string, { status: string; attempts: number }> = {
      ok: { status: "COMPLETED", attempts: 1 },
      e500: { status: "FAILED", attempts: 10 },
      e503: { status: "FAILED", attempts: 10 },
      e429: { status: "FAILED", attempts: 10 },
      e408: { status: "FAILED", attempts: 10 },
      hang: { status: "FAILED", attempts: 10 },
      refused: { status: "FAILED", attempts: 10 },
      e404: { status: "FAILED", attempts: 1 },
      e302: { status: "FAILED", attempts: 1 },
    };
    for (const [k, exp] of Object.entries(expectations)) {
      const w = hooks[k];
      const nid = byHook.get(w)!;
      assert.equal(finals[k].status, exp.status, `${k}: status`);
      const attempts = await allAttempts(emu, w, nid);
      assert.equal(
        attempts.length,
        exp.attempts,
        `${k}: number of attempts listed by the API: ${JSON.stringify(attempts)}`,
      );
      // what the receiver saw is what the API lists
      if (k !== "refused") {
        const seen = rc.received.filter((r) => r.json.id === nid);
        assert.equal(seen.length, exp.attempts, `${k}: attempts seen by the receiver`);
      }
      attempts.forEach((a, i) => {
        if (k === "hang" && hangAt.has(i)) {
          assert.equal(a.failureReason, "TIMED_OUT", `hang: attempt ${i + 1}`);
          assert.equal(a.responseCode, undefined);
          // the request was held until the emulator gave up (--deliveryTimeout)
          assert.ok(a.duration >= TIMEOUT_MS - 5, `hang: duration ${a.duration}`);
        } else if (k === "hang") assert.equal(a.responseCode, 503, `hang: attempt ${i + 1}`);
        else if (k === "refused") assert.equal(a.failureReason, "NO_RESPONSE");
        else assert.equal(a.responseCode, plans[k]);
      });
      // never early: attempt i+1 is made no sooner than DELAYS[i-1] / timeScale after
      // attempt i's sentTime (breaker.md §2); the exact gaps are on virtual time
      for (let i = 1; i < attempts.length; i++) {
        const gap = attempts[i].sentTime - attempts[i - 1].sentTime;
        const delay = DELAYS_SECONDS[i - 1] * 1000 / SCALE;
        assert.ok(gap >= delay, `${k}: attempt ${i + 1} came ${gap} ms after, before ${delay}`);
      }
    }
    // every request carried a valid signature
    assert.ok(rc.received.length > 0);
    for (const r of rc.received) {
      assert.ok(r.signatureOk, `signature refused: ${r.signatureProblem}`);
      assert.deepEqual(Object.keys(r.json).sort(), [
        "createdAt",
        "data",
        "eventType",
        "id",
        "resourceId",
        "webhookId",
        "workspaceId",
      ]);
      assert.equal(r.json.resourceId, "tx-retry");
    }
    // the refused endpoint's attempts never reached anyone
    assert.equal(rc.received.filter((r) => r.json.webhookId === hooks.refused).length, 0);
    // refused while closed, then delivered once the receiver listened again
    assert.equal(finals.back.status, "COMPLETED");
    const backAttempts = await allAttempts(emu, hooks.back, backId);
    const last = backAttempts.pop()!;
    assert.equal(last.responseCode, 200);
    assert.ok(
      backAttempts.length >= 3 && backAttempts.length <= 8,
      `${backAttempts.length} refused`,
    );
    for (const a of backAttempts) assert.equal(a.failureReason, "NO_RESPONSE");
    assert.equal(back.received.length, 1);
    assert.ok(back.received[0].signatureOk);
  } finally {
    await back.close();
    await rc.close();
    await emu.stop();
  }
});
