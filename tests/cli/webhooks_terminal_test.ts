/**
 * What only happens on a terminal, run in-process (`run()` with an Io that
 * says its streams are terminals) against a real emulator over real HTTP:
 * `webhooks delete` asks and deletes only on "y"; `resend-all` shows its
 * progress on standard error. Plus the per-notification idempotency keys of
 * `resend-all`: deterministic, and different per run key and notification.
 */
import assert from "node:assert/strict";
import { memoryIo } from "../support/memory_io.ts";
import { startFixture } from "../support/emulator_fixture.ts";
import { run } from "../../lib/cli/mod.ts";
import { defaultRunKey, resendKey } from "../../lib/platform/mod.ts";

Deno.test("on a terminal, delete asks: anything but y keeps the webhook; y deletes it", async () => {
  const fx = await startFixture();
  try {
    const hook = (await fx.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: "http://127.0.0.1:9/h", events: ["vault_account.asset.balance_updated"] },
    })).data;
    const creds = {
      SERVICE_API_KEY: fx.emu.apiKey,
      SERVICE_API_PRIVATE_KEY_PATH: fx.emu.privateKeyPath,
      SERVICE_API_BASE_URL: fx.emu.apiBaseUrl,
    };
    const ask = async (answer: string) => {
      const io = { ...memoryIo(answer, creds), stdinIsTerminal: true };
      const code = await run(["webhooks", "delete", "--webhookId", hook.id], { io });
      return { code, out: io.out(), err: io.err() };
    };
    const no = await ask("n\n");
    assert.deepEqual(no.code, 1);
    assert.match(no.err, new RegExp(`^Delete webhook ${hook.id}\\? \\[y/N\\] error: Not deleted`));
    assert.deepEqual((await fx.api("GET", `/v1/webhooks/${hook.id}`)).status, 200);
    const empty = await ask("");
    assert.deepEqual(empty.code, 1, "end of input is not a yes");
    assert.deepEqual((await fx.api("GET", `/v1/webhooks/${hook.id}`)).status, 200);
    const yes = await ask("y\n");
    assert.deepEqual(yes.code, 0, yes.err);
    assert.deepEqual((await fx.api("GET", `/v1/webhooks/${hook.id}`)).status, 404);
  } finally {
    await fx.stop();
  }
});

Deno.test("resend-all shows its progress on a terminal's standard error, and none otherwise", async () => {
  const fx = await startFixture();
  try {
    const hook = (await fx.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: "http://127.0.0.1:9/h", events: ["vault_account.asset.balance_updated"] },
    })).data;
    const made = await fx.admin("POST", "/notifications", {
      eventType: "vault_account.asset.balance_updated",
      count: 3,
    });
    assert.deepEqual(made.status, 201);
    const creds = {
      SERVICE_API_KEY: fx.emu.apiKey,
      SERVICE_API_PRIVATE_KEY_PATH: fx.emu.privateKeyPath,
      SERVICE_API_BASE_URL: fx.emu.apiBaseUrl,
    };
    // one by one (a window longer than the bulk call takes)
    const args = [
      "notifications",
      "resend-all",
      "--webhookId",
      hook.id,
      "--concurrency",
      "1",
      "--since",
      "25h",
    ];
    const tty = { ...memoryIo("", creds), stderrIsTerminal: true };
    assert.deepEqual(await run([...args, "--idempotencyKey", "a"], { io: tty }), 0, tty.err());
    for (const n of [1, 2, 3]) {
      assert.ok(tty.err().includes(`\r\x1b[2Kresent ${n} of 3`), tty.err());
    }
    assert.match(tty.err(), /resent 3 of 3 notification\(s\)\n$/);
    const pipe = memoryIo("", creds);
    assert.deepEqual(await run([...args, "--idempotencyKey", "b"], { io: pipe }), 0, pipe.err());
    assert.ok(!pipe.err().includes("\r"), "no progress line without a terminal");
    assert.match(pipe.err(), /resent 3 of 3 notification\(s\)\n$/);
    // the last 24 hours: one job, followed with --wait, its progress on the terminal only
    const bulk = ["notifications", "resend-all", "--webhookId", hook.id, "--wait"];
    const tty2 = { ...memoryIo("", creds), stderrIsTerminal: true };
    assert.deepEqual(await run(bulk, { io: tty2 }), 0, tty2.err());
    // deno-lint-ignore no-control-regex
    assert.match(tty2.err(), /\r\x1b\[2Kjob [0-9a-f-]+: /);
    assert.match(tty2.err(), /job [0-9a-f-]+: COMPLETED 3\/3\n$/);
    const pipe2 = memoryIo("", creds);
    assert.deepEqual(await run(bulk, { io: pipe2 }), 0, pipe2.err());
    assert.ok(!pipe2.err().includes("\r"), "no progress line without a terminal");
    assert.match(pipe2.err(), /job [0-9a-f-]+: COMPLETED 3\/3\n$/);
  } finally {
    await fx.stop();
  }
});

Deno.test("resend-all's keys: the same for the same run key and notification, else different", async () => {
  const k = await resendKey("run", "w1", "n1");
  assert.match(k, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.deepEqual(await resendKey("run", "w1", "n1"), k);
  const others = await Promise.all([
    resendKey("run2", "w1", "n1"),
    resendKey("run", "w2", "n1"),
    resendKey("run", "w1", "n2"),
  ]);
  assert.deepEqual(new Set([k, ...others]).size, 4);
  // the default run key: the window's start hour, so re-runs within that hour share it
  const t = Date.UTC(2026, 0, 1, 10, 5);
  assert.deepEqual(defaultRunKey("w1", t), "w1:2026-01-01T10:00:00.000Z");
  assert.deepEqual(defaultRunKey("w1", t + 50 * 60_000), defaultRunKey("w1", t));
  assert.ok(defaultRunKey("w1", t + 60 * 60_000) !== defaultRunKey("w1", t));
});
