/**
 * `service notifications resend-all` end to end: the real emulator process
 * delivers to a real receiver; the CLI is spawned as a user would run it.
 * The last 24 hours are resent with one platform call (resend by query) and
 * its job, followed with --wait (counted in the emulator's request log);
 * --status/--event/--resourceId narrow the query. A longer window is resent
 * one by one: a run interrupted with SIGINT and started again with the key
 * it printed resends nothing twice (counted at the receiver and in the
 * emulator's own attempt log); 429 with Retry-After is retried.
 */
import assert from "node:assert/strict";
import { runCli } from "../support/tools.ts";
import { type EmulatorProcess, startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { startReceiver } from "../support/receiver.ts";
import { spawnCli } from "./cli_child.ts";

interface N {
  id: string;
  status: string;
  updatedAt: number;
  resourceId?: string;
}

function env(emu: EmulatorProcess): Record<string, string> {
  return {
    SERVICE_API_KEY: emu.ready.apiKey,
    SERVICE_API_PRIVATE_KEY_PATH: emu.ready.privateKeyPath,
    SERVICE_API_BASE_URL: emu.ready.apiBaseUrl,
  };
}

async function notifications(emu: EmulatorProcess, hookId: string): Promise<N[]> {
  const r = await emu.api<{ data: N[] }>("GET", `/v1/webhooks/${hookId}/notifications`, {
    query: { pageSize: 100 },
  });
  return r.data.data;
}

async function attemptCount(emu: EmulatorProcess, hookId: string): Promise<number> {
  const r = await fetch(`${emu.ready.adminUrl}/attempts?webhookId=${hookId}`, {
    headers: { "X-API-Key": emu.ready.apiKey },
  });
  const { data } = await r.json() as { data: { action?: string }[] };
  return data.filter((a) => a.action === undefined).length; // attempts, not control lines
}

const settled = (ns: N[]) => ns.every((n) => n.status === "COMPLETED" || n.status === "FAILED");

Deno.test("resend-all resends every status once; an interrupted run continued with its key resends nothing twice", async (t) => {
  const emu = await startEmulatorOnAnvil(["--timeScale", "1000", "--verbose"]);
  let failBad = true;
  const rx = startReceiver({
    jwksUrl: emu.ready.jwksUrl,
    script: (_n, body) => (failBad && body.resourceId === "bad" ? 400 : 200),
  });
  try {
    const hook = (await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: `${rx.url}/hook`, events: ["transaction.created"] },
    })).data;
    for (const [resourceId, count] of [["good", 8], ["bad", 4]] as const) {
      const r = await emu.api("POST", "/admin/notifications", {
        body: { eventType: "transaction.created", resourceId, count },
      });
      assert.deepEqual(r.status, 201);
    }
    await rx.waitForCount(12);
    const first = await waitFor("12 settled notifications", async () => {
      const ns = await notifications(emu, hook.id);
      return ns.length === 12 && settled(ns) ? ns : undefined;
    });
    assert.deepEqual(first.filter((n) => n.status === "FAILED").length, 4);
    failBad = false;
    const cli = (args: string[]) =>
      runCli(["notifications", "resend-all", "--webhookId", hook.id, ...args], { env: env(emu) });

    await t.step("--dryRun counts every status and resends nothing", async () => {
      const r = await cli(["--dryRun", "--format", "json"]);
      assert.deepEqual(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.deepEqual(out.dryRun, true);
      assert.deepEqual(out.count, 12);
      assert.deepEqual(out.statuses, { COMPLETED: 8, FAILED: 4 });
      const now = await notifications(emu, hook.id);
      assert.deepEqual(
        now.map((n) => [n.id, n.updatedAt]).sort(),
        first.map((n) => [n.id, n.updatedAt]).sort(),
      );
      assert.deepEqual(rx.count, 12);
    });

    let resumeKey = "";
    let resumeSince = "";
    let doneFirst = 0;
    await t.step(
      "a run interrupted by SIGINT stops, says how far it got and how to go on",
      async () => {
        // each resend answers 300 ms late, one at a time: there is time to interrupt
        const fault = await emu.api<{ id: string }>("POST", "/admin/faults", {
          body: { kind: "latency", ms: 300, path: "/v1/webhooks/*/resend" },
        });
        assert.deepEqual(fault.status, 201);
        // 25 hours: more than the bulk call takes, so one by one
        const child = spawnCli(
          [
            "notifications",
            "resend-all",
            "--webhookId",
            hook.id,
            "--concurrency",
            "1",
            "--since",
            "25h",
          ],
          env(emu),
        );
        await rx.waitForCount(12 + 3);
        const code = await child.stop("SIGINT");
        assert.deepEqual(code, 1, child.stderr());
        const m = child.stderr().match(
          /Interrupted \(SIGINT\) after (\d+) of 12: run again with --idempotencyKey '([^']+)' --since (\S+) /,
        );
        assert.ok(m, child.stderr());
        doneFirst = Number(m[1]);
        resumeKey = m[2];
        resumeSince = m[3];
        assert.ok(doneFirst >= 3 && doneFirst < 12, `stopped after ${doneFirst}`);
        await emu.api("DELETE", `/admin/faults/${fault.data.id}`);
      },
    );

    await t.step("started again with that key, it resends only the rest", async () => {
      const r = await cli([
        "--idempotencyKey",
        resumeKey,
        "--since",
        resumeSince,
        "--format",
        "json",
      ]);
      assert.deepEqual(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.deepEqual([out.total, out.alreadyResent, out.resent], [12, doneFirst, 12 - doneFirst]);
      assert.match(r.stderr, new RegExp(`resent ${12 - doneFirst} of 12 notification`));
      await rx.waitForCount(24);
      const after = await waitFor("all settled again", async () => {
        const ns = await notifications(emu, hook.id);
        return settled(ns) && ns.every((n) => n.status === "COMPLETED") ? ns : undefined;
      });
      assert.deepEqual(after.length, 12);
      // exactly one more delivery per notification, at the receiver and in the emulator's log
      const perId = new Map<string, number>();
      for (const got of rx.received) perId.set(got.json.id, (perId.get(got.json.id) ?? 0) + 1);
      assert.deepEqual([...perId.values()].sort(), Array(12).fill(2));
      assert.deepEqual(await attemptCount(emu, hook.id), 24);
      assert.ok(rx.received.every((x) => x.signatureOk), "every delivery signed (jose)");
    });

    await t.step(
      "429 with Retry-After is waited out; a second run with the same key resends nothing",
      async () => {
        const fault = await emu.api("POST", "/admin/faults", {
          body: {
            kind: "status",
            status: 429,
            count: 2,
            retryAfter: 1,
            path: "/v1/webhooks/*/resend",
          },
        });
        assert.deepEqual(fault.status, 201);
        const started = Date.now();
        const r = await cli(["--idempotencyKey", "pass-2", "--since", "25h", "--format", "json"]);
        assert.deepEqual(r.code, 0, r.stderr);
        assert.ok(Date.now() - started >= 1000, "waited for Retry-After");
        assert.deepEqual(JSON.parse(r.stdout).resent, 12);
        await rx.waitForCount(36);
        const before = await waitFor("settled", async () => {
          const ns = await notifications(emu, hook.id);
          return settled(ns) ? ns : undefined;
        });
        const again = await cli([
          "--idempotencyKey",
          "pass-2",
          "--since",
          "25h",
          "--format",
          "json",
        ]);
        assert.deepEqual(again.code, 0, again.stderr);
        const out = JSON.parse(again.stdout);
        assert.deepEqual([out.resent, out.alreadyResent], [0, 12]);
        // a resend would have changed the notification at once (IN_PROGRESS, new updatedAt)
        const now = await notifications(emu, hook.id);
        assert.deepEqual(
          now.map((n) => [n.id, n.status, n.updatedAt]).sort(),
          before.map((n) => [n.id, n.status, n.updatedAt]).sort(),
        );
        assert.deepEqual(await attemptCount(emu, hook.id), 36);
      },
    );

    await t.step("the last 24 hours: one resend-by-query call and its job, --wait", async () => {
      const calls = () =>
        emu.stderr().split("\n").filter((l) =>
          l.includes(`/v1/webhooks/${hook.id}/notifications/`)
        );
      const before = calls().length;
      const r = await cli(["--wait", "--format", "json"]);
      assert.deepEqual(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.deepEqual([out.accepted, out.status, out.processed, out.total], [
        true,
        "COMPLETED",
        12,
        12,
      ]);
      assert.match(r.stderr, /resending 12 notification\(s\) created since .*: job /);
      const made = calls().slice(before);
      const posts = made.filter((l) => l.startsWith("POST "));
      assert.deepEqual(posts.length, 1, made.join("\n"));
      assert.match(posts[0], /POST \/v1\/webhooks\/[^/]+\/notifications\/resend_by_query -> 202/);
      assert.ok(
        made.slice(1).every((l) => /GET .*\/resend_by_query\/jobs\/[^ ]+ -> 200/.test(l)),
        made.join("\n"),
      );
      await rx.waitForCount(48);
    });

    await t.step("--status, --event and --resourceId narrow the query", async () => {
      await waitFor("settled", async () => settled(await notifications(emu, hook.id)));
      const r = await cli([
        "--status",
        "completed",
        "--event",
        "transaction.created",
        "--resourceId",
        "bad",
        "--wait",
        "--format",
        "json",
      ]);
      assert.deepEqual(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout).total, 4);
      await rx.waitForCount(52);
      const none = await cli(["--status", "FAILED", "--format", "json"]);
      assert.deepEqual(none.code, 0, none.stderr);
      assert.deepEqual(JSON.parse(none.stdout), {
        accepted: true,
        total: 0,
        idempotencyKey: JSON.parse(none.stdout).idempotencyKey,
      });
    });

    await t.step("usage: --since beyond 30 days, a missing webhook id", async () => {
      const old = await cli(["--since", "31d"]);
      assert.deepEqual(old.code, 2);
      assert.match(old.stderr, /30 days/);
      const none = await runCli(["notifications", "resend-all"], { env: env(emu) });
      assert.deepEqual(none.code, 2);
      assert.match(none.stderr, /Missing --webhookId/);
    });
  } finally {
    await rx.close();
    await emu.stop();
  }
});
