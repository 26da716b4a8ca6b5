/**
 * `service webhooks listen` end to end, as a user runs it: the real emulator
 * process delivers to the spawned listener, which forwards to an app (a real
 * receiver that checks signatures with jose, so the raw body and headers
 * must arrive untouched). The platform sees what the app answers (503s are
 * retried, an unreachable app is a 502), the listener prints one line per
 * delivery, and `--record` replays with `service breaker simulate`.
 */
import assert from "node:assert/strict";
import { runCli } from "../support/tools.ts";
import { type EmulatorProcess, startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { startReceiver } from "../support/receiver.ts";
import { spawnCli } from "./cli_child.ts";

function env(emu: EmulatorProcess): Record<string, string> {
  return {
    SERVICE_API_KEY: emu.ready.apiKey,
    SERVICE_API_PRIVATE_KEY_PATH: emu.ready.privateKeyPath,
    SERVICE_API_BASE_URL: emu.ready.apiBaseUrl,
  };
}

interface Delivery {
  event: string;
  time: string;
  eventType: string;
  resourceId: string | null;
  notificationId: string | null;
  webhookId: string | null;
  signatureVerified: boolean;
  signatureProblem?: string;
  status: number;
  forwardProblem?: string;
}

async function trigger(emu: EmulatorProcess, resourceId: string, count = 1): Promise<string[]> {
  const r = await emu.api<{ data: { id: string }[] }>("POST", "/admin/notifications", {
    body: { eventType: "transaction.created", resourceId, count },
  });
  assert.deepEqual(r.status, 201);
  return r.data.data.map((n) => n.id);
}

async function attemptsOf(emu: EmulatorProcess, hook: string, id: string) {
  const r = await emu.api<{ data: { responseCode?: number; failureReason?: string }[] }>(
    "GET",
    `/v1/webhooks/${hook}/notifications/${id}/attempts`,
    { query: { pageSize: 100 } },
  );
  return r.data.data;
}

async function statusOf(emu: EmulatorProcess, hook: string, id: string): Promise<string> {
  return (await emu.api<{ status: string }>("GET", `/v1/webhooks/${hook}/notifications/${id}`))
    .data.status;
}

Deno.test("listen forwards to the app and answers with the app's status; prints, verifies and records each delivery", async () => {
  const emu = await startEmulatorOnAnvil(["--timeScale", "1000"]);
  const refusedBefore = new Map<string, number>();
  // the app: the first two deliveries of resource "retry" get 503, everything else 200
  const app = startReceiver({
    jwksUrl: emu.ready.jwksUrl,
    script: (_n, body) => {
      if (body.resourceId !== "retry") return 200;
      const k = refusedBefore.get(body.id) ?? 0;
      refusedBefore.set(body.id, k + 1);
      return k < 2 ? 503 : 200;
    },
  });
  const dir = await Deno.makeTempDir({ prefix: "listen-test-" });
  const record = `${dir}/attempts.ndjson`;
  const listen = spawnCli([
    "webhooks",
    "listen",
    "--forward-to",
    `${app.url}/app`,
    "--record",
    record,
    "--format",
    "ndjson",
  ], { SERVICE_API_BASE_URL: emu.ready.apiBaseUrl });
  let stopped = false;
  try {
    const first = JSON.parse(await listen.waitLine(() => true, "the first line"));
    assert.deepEqual(first.event, "listening");
    assert.match(first.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const created = await runCli([
      "webhooks",
      "create",
      "--url",
      first.url,
      "--events",
      "transaction.created",
      "--format",
      "json",
    ], { env: env(emu) });
    assert.deepEqual(created.code, 0, created.stderr);
    const hook = JSON.parse(created.stdout).id as string;
    const deliveries = () =>
      listen.lines.slice(1).map((l) => JSON.parse(l) as Delivery).filter((d) =>
        d.event === "delivery"
      );

    // good traffic first, so that the failures below stay under the breaker's thresholds
    const ok = await trigger(emu, "ok", 10);
    await waitFor("10 deliveries printed", () => deliveries().length >= 10);
    const [retry] = await trigger(emu, "retry");
    await waitFor("retry COMPLETED", async () => await statusOf(emu, hook, retry) === "COMPLETED");
    assert.deepEqual(
      (await attemptsOf(emu, hook, retry)).map((a) => a.responseCode).sort(),
      [200, 503, 503],
      "the platform saw the app's answers",
    );
    await waitFor(
      "3 lines for retry",
      () => deliveries().filter((d) => d.notificationId === retry).length === 3,
    );
    const lines = deliveries().filter((d) => d.notificationId === retry);
    assert.deepEqual(lines.map((d) => d.status), [503, 503, 200]);
    for (const d of deliveries()) {
      assert.deepEqual(d.signatureVerified, true, JSON.stringify(d));
      assert.deepEqual([d.webhookId, d.eventType], [hook, "transaction.created"]);
    }
    assert.deepEqual(lines[0].resourceId, "retry");
    assert.deepEqual(new Set(deliveries().map((d) => d.notificationId)), new Set([...ok, retry]));
    // the app got the raw body and the signature header untouched (jose verified them there)
    assert.deepEqual(app.received.length, 13);
    assert.ok(app.received.every((r) => r.signatureOk), "forwarded deliveries verify (jose)");

    // the app goes away: the platform gets 502 and retries; back again, the retry lands
    await app.refuse();
    const [down] = await trigger(emu, "down");
    await waitFor(
      "a 502 attempt",
      async () => (await attemptsOf(emu, hook, down)).some((a) => a.responseCode === 502),
    );
    // listen prints its line after answering: wait for the line too, not only for the attempt
    await waitFor(
      "listen's 502 line",
      () => deliveries().some((d) => d.notificationId === down && d.status === 502),
    );
    const line502 = deliveries().find((d) => d.notificationId === down && d.status === 502);
    assert.ok(line502?.forwardProblem?.includes("unreachable"), JSON.stringify(line502));
    app.reopen();
    await waitFor("down COMPLETED", async () => await statusOf(emu, hook, down) === "COMPLETED");

    // an unsigned request is answered like any other, and printed as not verified
    const forged = await fetch(first.url, {
      method: "POST",
      headers: { "content-type": "application/json", "service-webhook-signature": "x..y" },
      body: JSON.stringify({ id: "forged", webhookId: "forged-hook", eventType: "x" }),
    });
    await forged.body?.cancel();
    const fake = JSON.parse(
      await listen.waitLine((l) => l.includes('"forged"'), "the forged request's line"),
    ) as Delivery;
    assert.deepEqual(fake.signatureVerified, false);
    assert.match(fake.signatureProblem!, /^malformed: /);

    const printed = deliveries().length;
    const code = await listen.stop("SIGINT");
    stopped = true;
    assert.deepEqual(code, 0, listen.stderr());

    // --record: one line per attempt, in breaker simulate's input format
    const recorded = (await Deno.readTextFile(record)).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(recorded.length, printed);
    assert.deepEqual(
      recorded.filter((r) => r.notificationId === retry).map((r) => r.responseCode),
      [503, 503, 200],
    );
    assert.ok(recorded.some((r) => r.notificationId === down && r.responseCode === 502));
    const sim = await runCli(["breaker", "simulate", record, "--format", "ndjson"]);
    assert.deepEqual(sim.code, 0, sim.stderr);
    const summary = sim.stdout.trim().split("\n").map((l) => JSON.parse(l)).find((l) =>
      l.type === "summary"
    );
    assert.deepEqual([summary.attempts, summary.suspensions, summary.invalidLines], [
      printed,
      0,
      0,
    ]);
    assert.deepEqual(summary.webhooks, 2, "the emulator's webhook and the forged request's");
  } finally {
    if (!stopped) await listen.stop("SIGKILL");
    await app.close();
    await emu.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("listen --respond answers every delivery itself: 410 makes the notification FAILED at once", async () => {
  const emu = await startEmulatorOnAnvil(["--timeScale", "1000", "--minAttempts", "100"]);
  const listen = spawnCli(["webhooks", "listen", "--respond", "410", "--format", "table"], {
    SERVICE_API_BASE_URL: emu.ready.apiBaseUrl,
  });
  let stopped = false;
  try {
    const url = await listen.waitLine(() => true, "the address");
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const hook = (await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url, events: ["transaction.created"] },
    })).data.id;
    const [id] = await trigger(emu, "tx-410");
    await waitFor("FAILED", async () => await statusOf(emu, hook, id) === "FAILED");
    assert.deepEqual((await attemptsOf(emu, hook, id)).map((a) => a.responseCode), [410]);
    const line = await listen.waitLine((l) => l.includes(id), "the delivery line");
    assert.match(
      line,
      /transaction\.created {2}tx-410 {2}\S+ {2}signature ok {2}-> 410 {2}\d+ ms$/,
    );
    // the port is taken now: a second listener on it says so (exit 1)
    const port = new URL(url).port;
    const second = await runCli(["webhooks", "listen", "--port", port], {
      env: { SERVICE_API_BASE_URL: emu.ready.apiBaseUrl },
    });
    assert.deepEqual(second.code, 1);
    assert.match(second.stderr, new RegExp(`Port ${port} on 127.0.0.1 is in use`));
    assert.deepEqual(await listen.stop("SIGTERM"), 0);
    stopped = true;
  } finally {
    if (!stopped) await listen.stop("SIGKILL");
    await emu.stop();
  }
});

Deno.test("listen: --forward-to with --respond, or a bad --forward-to, is a usage error", async () => {
  const both = await runCli([
    "webhooks",
    "listen",
    "--forward-to",
    "http://127.0.0.1:3000/",
    "--respond",
    "200",
  ]);
  assert.deepEqual(both.code, 2);
  assert.match(both.stderr, /exclude each other/);
  const bad = await runCli(["webhooks", "listen", "--forward-to", "localhost:3000"]);
  assert.deepEqual(bad.code, 2, bad.stderr);
});
