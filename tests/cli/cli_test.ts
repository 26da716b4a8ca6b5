/**
 * Black-box tests: spawn main.ts as a user would and check stdout, stderr
 * and the exit code.
 */
import assert from "node:assert/strict";
import { runCli } from "../support/tools.ts";
import { makeTestKeys } from "../support/keys.ts";
import { startRecordingServer } from "../support/recording_server.ts";
import meta from "../../deno.json" with { type: "json" };

const keys = await makeTestKeys();
const SECRET_KEY = "sk-test-0123456789-SECRET";

Deno.test("--help lists the commands and exits 0; no command prints help and exits 2", async () => {
  const r = await runCli(["--help"]);
  assert.deepEqual(r.code, 0);
  for (const c of ["rpc", "notifications", "webhooks", "breaker", "emulator"]) {
    assert.match(r.stdout, new RegExp(`\\n  ${c} `));
  }
  const none = await runCli([]);
  assert.deepEqual(none.code, 2);
});

Deno.test("--version prints the version of deno.json", async () => {
  const r = await runCli(["--version"]);
  assert.deepEqual(r.code, 0);
  assert.deepEqual(r.stdout.trim(), `service ${meta.version}`);
});

Deno.test("help works at every level without credentials", async () => {
  for (
    const args of [["webhooks", "--help"], ["webhooks", "list", "--help"], [
      "webhooks",
      "enable",
      "-h",
    ]]
  ) {
    const r = await runCli(args);
    assert.deepEqual(r.code, 0, args.join(" "));
    assert.match(r.stdout, /Usage: service webhooks/);
    assert.deepEqual(r.stderr, "");
  }
});

Deno.test("an unknown flag is one line naming it, exit 2", async () => {
  const r = await runCli(["webhooks", "list", "--pagesize=3x", "--nope"]);
  assert.deepEqual(r.code, 2);
  assert.deepEqual(r.stderr.trim().split("\n").length, 1);
  assert.match(r.stderr, /Invalid value "3x" for --pageSize: expected a whole number/);
  const r2 = await runCli(["webhooks", "list", "--webhok-id", "x"]);
  assert.deepEqual(r2.code, 2);
  assert.match(r2.stderr, /Unknown flag "--webhok-id"/);
  const r3 = await runCli(["webhooks", "frobnicate"]);
  assert.deepEqual(r3.code, 2);
  assert.match(
    r3.stderr,
    /Unknown verb "frobnicate".*expected one of list, get, enable, disable, metrics/,
  );
  const r4 = await runCli(["nonsense"]);
  assert.deepEqual(r4.code, 2);
});

Deno.test("missing credentials exit 2 with a message naming the flags and variables", async () => {
  const r = await runCli(["webhooks", "list"]);
  assert.deepEqual(r.code, 2);
  assert.match(r.stderr, /--apiKey \(or SERVICE_API_KEY\)/);
  assert.match(r.stderr, /--privateKey \(or SERVICE_API_PRIVATE_KEY_PATH\)/);
  assert.deepEqual(r.stdout, "");
});

Deno.test("environment variables are used when the flag is absent, and the flag wins", async () => {
  const srv = startRecordingServer({ status: 200, body: { data: [], next: null } });
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/k.pem`, keys.pkcs8Pem);
    const env = {
      SERVICE_API_KEY: "from-env",
      SERVICE_API_PRIVATE_KEY_PATH: `${dir}/k.pem`,
      SERVICE_API_BASE_URL: srv.url,
    };
    const a = await runCli(["webhooks", "list", "--format", "json"], { env });
    assert.deepEqual(a.code, 0, a.stderr);
    assert.deepEqual(JSON.parse(a.stdout), { data: [] });
    const b = await runCli(["webhooks", "list", "--api-key", "from-flag"], { env });
    assert.deepEqual(b.code, 0, b.stderr);
    assert.deepEqual(srv.requests.map((r) => r.headers.get("x-api-key")), [
      "from-env",
      "from-flag",
    ]);
  } finally {
    await srv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--verbose=false really is false; --verbose adds the status and request id", async () => {
  const srv = startRecordingServer({
    status: 404,
    body: { message: "Webhook not found", code: 1404 },
  });
  try {
    const args = [
      "webhooks",
      "get",
      "--webhookId",
      "nope",
      "--apiKey",
      SECRET_KEY,
      "--privateKey",
      keys.pkcs8Pem,
      "--apiBaseUrl",
      srv.url,
    ];
    const quiet = await runCli([...args, "--verbose=false"]);
    assert.deepEqual(quiet.code, 4);
    assert.deepEqual(quiet.stderr.trim().split("\n").length, 1, quiet.stderr);
    assert.match(
      quiet.stderr,
      /Cannot get webhook "nope": the platform answered 404 .*"Webhook not found"/,
    );
    const loud = await runCli([...args, "--verbose"]);
    assert.deepEqual(loud.code, 4);
    assert.match(loud.stderr, /status: 404, platform code: 1404, request id: req-2/);
  } finally {
    await srv.close();
  }
});

Deno.test("a secret never appears in stdout or stderr, even with --verbose on failures", async () => {
  const srv = startRecordingServer({ status: 401, body: { message: "Unauthorized", code: -7 } });
  try {
    for (const extra of [[], ["--verbose"]]) {
      const r = await runCli(
        [
          "webhooks",
          "list",
          "--apiKey",
          SECRET_KEY,
          "--privateKey",
          keys.pkcs8Pem,
          "--apiBaseUrl",
          srv.url,
          ...extra,
        ],
      );
      assert.deepEqual(r.code, 3);
      for (const out of [r.stdout, r.stderr]) {
        assert.ok(!out.includes(SECRET_KEY), "the API key in the output");
        assert.ok(!out.includes(keys.pkcs8Pem.split("\n")[1]), "the private key in the output");
      }
    }
    // A malformed key passed as text is not echoed either.
    const bad = await runCli([
      "webhooks",
      "list",
      "--apiKey",
      SECRET_KEY,
      "--privateKey",
      "-----BEGIN PRIVATE KEY-----\nSECRETSTUFF\n-----END PRIVATE KEY-----",
    ]);
    assert.deepEqual(bad.code, 2);
    assert.ok(!bad.stderr.includes("SECRETSTUFF"), "unexpected SECRETSTUFF in output");
    assert.ok(!bad.stderr.includes(SECRET_KEY), "the API key in the output");
    // Token never in output with --verbose.
    assert.ok(!/eyJ[A-Za-z0-9_-]{10,}/.test(bad.stderr));
  } finally {
    await srv.close();
  }
});

Deno.test("webhooks enable prints the new status; metrics prints the error rate", async () => {
  const srv = startRecordingServer();
  const hook = { id: "w1", url: "https://x.test", events: ["e"], createdAt: 1, updatedAt: 2 };
  srv.script.push(
    { status: 200, body: { ...hook, status: "SUSPENDED" } },
    { status: 200, body: { ...hook, status: "ENABLED" } },
    { status: 200, body: { value: "55" } },
  );
  try {
    const conn = ["--apiKey", "k", "--privateKey", keys.pkcs8Pem, "--apiBaseUrl", srv.url];
    const r = await runCli([
      "webhooks",
      "enable",
      "--webhookId",
      "w1",
      "--format",
      "table",
      ...conn,
    ]);
    assert.deepEqual(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout, "w1: SUSPENDED -> ENABLED\n");
    assert.deepEqual(srv.requests[1].method, "PATCH");
    assert.deepEqual(new TextDecoder().decode(srv.requests[1].body), '{"enabled":true}');
    const m = await runCli([
      "webhooks",
      "metrics",
      "--webhookId",
      "w1",
      "--format",
      "json",
      ...conn,
    ]);
    assert.deepEqual(m.code, 0, m.stderr);
    assert.deepEqual(JSON.parse(m.stdout).value, 55);
    assert.deepEqual(srv.requests[2].path, "/v1/webhooks/w1/metrics/LAST_ACTIVE_HOUR_ERROR_RATE");
  } finally {
    await srv.close();
  }
});

Deno.test("resend-failed --wait: a job that ends FAILED exits 1, naming the job and how far it got", async () => {
  // The emulator's jobs always complete, so a recording server plays the platform here.
  const W = "0b6c2f1e-0000-4000-8000-000000000001";
  const JOB = "job-7";
  const jobPath = `/v1/webhooks/${W}/notifications/resend_failed/jobs/${JOB}`;
  const srv = startRecordingServer({ status: 500 });
  srv.script.push(
    { status: 202, body: { total: 3 }, headers: { location: jobPath } },
    { status: 200, body: { jobId: JOB, status: "IN_PROGRESS", processed: 1, total: 3 } },
    { status: 200, body: { jobId: JOB, status: "FAILED", processed: 2, total: 3 } },
  );
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/k.pem`, keys.pkcs8Pem);
    const env = {
      SERVICE_API_KEY: "k",
      SERVICE_API_PRIVATE_KEY_PATH: `${dir}/k.pem`,
      SERVICE_API_BASE_URL: srv.url,
    };
    const r = await runCli(
      ["notifications", "resend-failed", "--webhookId", W, "--wait", "--format", "json"],
      { env },
    );
    assert.deepEqual(r.code, 1, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      accepted: true,
      jobId: JOB,
      status: "FAILED",
      processed: 2,
      total: 3,
      idempotencyKey: srv.requests[0].headers.get("idempotency-key"),
    });
    assert.deepEqual(
      r.stderr,
      `job ${JOB}: IN_PROGRESS 1/3\njob ${JOB}: FAILED 2/3\n` +
        `error: The resend job ${JOB} FAILED after 2 of 3. Run resend-failed again, or resend one by one.\n`,
    );
    assert.deepEqual(srv.requests.map((q) => `${q.method} ${q.path}`), [
      `POST /v1/webhooks/${W}/notifications/resend_failed`,
      `GET ${jobPath}`,
      `GET ${jobPath}`,
    ]);
  } finally {
    await srv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
