/**
 * `service notifications tail --follow` end to end: a spawned CLI follows a
 * webhook of the real emulator process while notifications are created,
 * fail, and are resent; the test waits for each expected line (events, not
 * sleeps), then stops it with SIGINT. Also the one-shot form, and
 * `resend-by-resource` reporting its count.
 */
import assert from "node:assert/strict";
import { runCli } from "../support/tools.ts";
import { type EmulatorProcess, startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { startReceiver } from "../support/receiver.ts";
import { spawnCli } from "./cli_child.ts";

function env(emu: EmulatorProcess): Record<string, string> {
  return {
    SERVICE_API_KEY: emu.ready.apiKey,
    SERVICE_API_PRIVATE_KEY_PATH: emu.ready.privateKeyPath,
    SERVICE_API_BASE_URL: emu.ready.apiBaseUrl,
  };
}

interface Line {
  change: string;
  id: string;
  status: string;
  previousStatus?: string;
  eventType: string;
  resourceId: string | null;
  webhookId: string;
  time: string;
}

Deno.test("tail --follow prints new notifications and each status change as they happen, until SIGINT", async () => {
  const emu = await startEmulatorOnAnvil(["--timeScale", "1000"]);
  // the first delivery of resource "flaky" is refused with 400 (FAILED at once), later ones pass
  let flakyRefused = false;
  const rx = startReceiver({
    script: (_n, body) => {
      if (body.resourceId !== "flaky" || flakyRefused) return 200;
      flakyRefused = true;
      return 400;
    },
  });
  try {
    const hook = (await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: `${rx.url}/hook`, events: ["transaction.created"] },
    })).data;
    // five good deliveries first, so that one 400 (1 in 6) does not suspend the endpoint
    await emu.api("POST", "/admin/notifications", {
      body: { eventType: "transaction.created", resourceId: "fine", count: 5 },
    });
    await rx.waitForCount(5);
    const tail = spawnCli([
      "notifications",
      "tail",
      "--webhookId",
      hook.id,
      "--follow",
      "--interval",
      "100ms",
      "--format",
      "ndjson",
    ], env(emu));
    let stopped = false;
    try {
      await tail.waitStderr("following notifications of");
      const flaky = (await emu.api<{ data: { id: string }[] }>("POST", "/admin/notifications", {
        body: { eventType: "transaction.created", resourceId: "flaky" },
      })).data.data[0].id;
      const parsed = () => tail.lines.map((l) => JSON.parse(l) as Line);
      const has = (pred: (l: Line) => boolean) => (line: string) => pred(JSON.parse(line));
      const created = JSON.parse(
        await tail.waitLine(has((l) => l.id === flaky && l.change === "created"), "created line"),
      ) as Line;
      assert.deepEqual(
        [created.webhookId, created.eventType, created.resourceId],
        [hook.id, "transaction.created", "flaky"],
      );
      await tail.waitLine(has((l) => l.id === flaky && l.status === "FAILED"), "FAILED");
      const resend = await runCli(
        ["notifications", "resend", "--webhookId", hook.id, "--notificationId", flaky],
        { env: env(emu) },
      );
      assert.deepEqual(resend.code, 0, resend.stderr);
      const done = JSON.parse(
        await tail.waitLine(
          has((l) => l.id === flaky && l.status === "COMPLETED"),
          "the resent notification COMPLETED",
        ),
      ) as Line;
      assert.deepEqual(done.change, "status");
      assert.ok(
        done.previousStatus === "FAILED" || done.previousStatus === "IN_PROGRESS",
        JSON.stringify(done),
      );
      // one line per change: never the same (id, status) twice in a row
      const lines = parsed().filter((l) => l.id === flaky);
      for (let i = 1; i < lines.length; i++) {
        assert.ok(lines[i].status !== lines[i - 1].status, JSON.stringify(lines));
        assert.deepEqual(lines[i].previousStatus, lines[i - 1].status);
      }
      assert.ok(lines.length >= 2 && lines.length <= 4, JSON.stringify(lines));
      const code = await tail.stop("SIGINT");
      stopped = true;
      assert.deepEqual(code, 0, tail.stderr());
      assert.match(tail.stderr(), /stopped \(SIGINT\)/);

      // the one-shot form: what changed in the last 10 minutes, then exit
      const once = await runCli(
        ["notifications", "tail", "--webhookId", hook.id, "--since", "10m", "--format", "ndjson"],
        { env: env(emu) },
      );
      assert.deepEqual(once.code, 0, once.stderr);
      const onceLines = once.stdout.trim().split("\n").map((l) => JSON.parse(l) as Line);
      assert.deepEqual(new Set(onceLines.map((l) => l.id)).size, 6);
      assert.deepEqual(
        new Set(onceLines.filter((l) => l.resourceId === "fine").map((l) => l.id)).size,
        5,
      );
      assert.deepEqual(onceLines.at(-1)!.id, flaky, "in updatedAt order: the resent one last");
      // each notification created since: its creation, then the change to where it is now
      // (one line only when both fell in the same millisecond)
      const flakyOnce = onceLines.filter((l) => l.id === flaky);
      assert.deepEqual(
        flakyOnce.map((l) => [l.change, l.status, l.previousStatus]),
        [["created", "IN_PROGRESS", undefined], ["status", "COMPLETED", "IN_PROGRESS"]],
      );
      for (const id of new Set(onceLines.map((l) => l.id))) {
        const mine = onceLines.filter((l) => l.id === id);
        assert.deepEqual(mine[0].change, "created", JSON.stringify(mine));
        assert.deepEqual(mine.at(-1)!.status, "COMPLETED", JSON.stringify(mine));
      }

      // resend-by-resource says how many it resent (the platform's 202 carries no count)
      const byRes = await runCli([
        "notifications",
        "resend-by-resource",
        "--webhookId",
        hook.id,
        "--resourceId",
        "flaky",
        "--excludeStatuses=",
        "--format",
        "json",
      ], { env: env(emu) });
      assert.deepEqual(byRes.code, 0, byRes.stderr);
      assert.deepEqual(JSON.parse(byRes.stdout).count, 1);
      const byResDefault = await runCli([
        "notifications",
        "resend-by-resource",
        "--webhookId",
        hook.id,
        "--resourceId",
        "nothing-here",
      ], { env: env(emu) });
      assert.deepEqual(byResDefault.code, 0, byResDefault.stderr);
      assert.match(
        byResDefault.stderr,
        /resend of 0 notifications of nothing-here accepted \((FAILED|IN_PROGRESS|ON_HOLD)(, (FAILED|IN_PROGRESS|ON_HOLD)){2}\)/,
      );
    } finally {
      if (!stopped) await tail.stop("SIGKILL");
    }
  } finally {
    await rx.close();
    await emu.stop();
  }
});

Deno.test("tail: --format json with --follow and a missing webhook id are usage errors", async () => {
  const r = await runCli([
    "notifications",
    "tail",
    "--webhookId",
    "w",
    "--follow",
    "--format",
    "json",
    "--apiKey",
    "k",
    "--privateKey",
    "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
  ]);
  assert.deepEqual(r.code, 2, r.stderr);
  const none = await runCli(["notifications", "tail"]);
  assert.deepEqual(none.code, 2);
  assert.match(none.stderr, /Missing --webhookId/);
});
