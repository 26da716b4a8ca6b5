/**
 * `breaker simulate --webhookId` against a platform that misbehaves
 * (issue 32), played by a real server on loopback
 * (`tests/support/hostile_platform.ts`): pages far larger than asked with a
 * new `next` forever, attempts without end for one notification,
 * notifications created before the query's start, attempts the merge cannot
 * order within its bound, a repeated cursor. Each run must end on its own
 * with one clear line and exit 6 (the platform's answer is wrong), under
 * {@linkcode PEAK_MB} of peak resident memory (the process tree's VmHWM):
 * on 798039b each grew to gigabytes and never ended (here: killed after
 * {@linkcode LIMIT_MS}, the test fails). Also: an invalid attempt is named
 * as the platform's (not "line 1 … Fix the line"), and `--save` leaves
 * nothing on SIGTERM and refuses a directory before any request.
 */

import assert from "node:assert/strict";
import { json, runMeasured, startHostilePlatform } from "../support/hostile_platform.ts";
import { makeTestKeys } from "../support/keys.ts";
import { mainCommand } from "../support/main_command.ts";
import { waitFor } from "../support/wait_for.ts";

const keys = await makeTestKeys();
/** The stated bound of a read against a misbehaving platform (docs/promises.md). */
const PEAK_MB = 250;
/** A run still going after this is killed: the test fails. */
const LIMIT_MS = 60_000;
const NOW = Date.UTC(2026, 0, 2);
const HOUR = 3_600_000;

const webhook = () =>
  json({ id: "w1", url: "http://127.0.0.1:9/hook", events: ["x"], status: "ENABLED" });
const notification = (id: string, createdAt: number) => ({
  id,
  createdAt,
  updatedAt: createdAt,
  status: "FAILED",
  eventType: "transaction.status.updated",
});
const attempt = (sentTime: number, responseCode = 500) => ({
  sentTime,
  responseCode,
  duration: 5,
});
let cursors = 0;
const fresh = () => `c${++cursors}`;

function simulate(baseUrl: string, extra: string[] = []): Deno.Command {
  return mainCommand([
    "breaker",
    "simulate",
    "--webhookId",
    "w1",
    "--from",
    new Date(NOW - 2 * HOUR).toISOString(),
    "--to",
    new Date(NOW).toISOString(),
    "--apiBaseUrl",
    baseUrl,
    "--apiKey",
    "k",
    "--privateKey",
    keys.pkcs8Pem,
    "--retries",
    "0",
    ...extra,
  ]);
}

/** Runs against `routes`; the run must end by itself with `code` and a line matching `message`. */
async function endsWith(
  routes: Parameters<typeof startHostilePlatform>[0],
  code: number,
  message: RegExp,
) {
  const platform = startHostilePlatform({ "GET /v1/webhooks/:id": webhook, ...routes });
  try {
    const r = await runMeasured(simulate(platform.baseUrl, ["--concurrency", "32"]), LIMIT_MS);
    assert.ok(!r.timedOut, `still running after ${LIMIT_MS} ms, peak ${r.peakMb.toFixed(0)} MB`);
    assert.equal(r.code, code, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.ok(r.peakMb < PEAK_MB, `peak RSS ${r.peakMb.toFixed(0)} MB`);
    if (Deno.env.get("SHOW_PEAK")) console.log(`peak RSS ${r.peakMb.toFixed(0)} MB`);
    return r;
  } finally {
    await platform.close();
  }
}

Deno.test("hostile platform: 100,000-item pages of notifications with a new next forever: exit 6 naming the page", async () => {
  const page = JSON.stringify(
    Array.from({ length: 100_000 }, (_, i) => notification(`n${i}`, NOW - HOUR)),
  );
  await endsWith(
    {
      "GET /v1/webhooks/:id/notifications": () =>
        new Response(`{"data":${page},"next":"${fresh()}"}`),
      "GET /v1/webhooks/:id/notifications/:n/attempts": () => json({ data: [], next: null }),
    },
    6,
    /list notifications of webhook "w1": .*a page of 100000 items, more than the pageSize 100 asked for/,
  );
});

Deno.test("hostile platform: 100,000-item pages of attempts with a new next forever: exit 6", async () => {
  const page = JSON.stringify(Array.from({ length: 100_000 }, (_, i) => attempt(NOW - HOUR + i)));
  await endsWith(
    {
      "GET /v1/webhooks/:id/notifications": () =>
        json({ data: [notification("n1", NOW - HOUR)], next: null }),
      "GET /v1/webhooks/:id/notifications/:n/attempts": () =>
        new Response(`{"data":${page},"next":"${fresh()}"}`),
    },
    6,
    /list the attempts of notification "n1": .*a page of 100000 items/,
  );
});

Deno.test("hostile platform: pages of 100 attempts for one notification forever: exit 6 naming the notification", async () => {
  let t = NOW - HOUR;
  await endsWith(
    {
      "GET /v1/webhooks/:id/notifications": () =>
        json({ data: [notification("n1", NOW - HOUR)], next: null }),
      "GET /v1/webhooks/:id/notifications/:n/attempts": () =>
        json({ data: Array.from({ length: 100 }, () => attempt(t++)), next: fresh() }),
    },
    6,
    /more than 1000 attempts for notification "n1"/,
  );
});

Deno.test("hostile platform: empty pages of attempts with a new next forever: exit 6 naming the notification", async () => {
  await endsWith(
    {
      "GET /v1/webhooks/:id/notifications": () =>
        json({ data: [notification("n1", NOW - HOUR)], next: null }),
      "GET /v1/webhooks/:id/notifications/:n/attempts": () => json({ data: [], next: fresh() }),
    },
    6,
    /the attempts of notification "n1" over more than 20 pages/,
  );
});

Deno.test("hostile platform: notifications created long before the window, pages forever: exit 6", async () => {
  let id = 0;
  await endsWith(
    {
      "GET /v1/webhooks/:id/notifications": () =>
        json({
          data: Array.from({ length: 100 }, () => notification(`n${++id}`, 0)),
          next: fresh(),
        }),
      "GET /v1/webhooks/:id/notifications/:n/attempts": () =>
        json({ data: [attempt(NOW - HOUR)], next: null }),
    },
    6,
    /notification "n1" created at 1970-01-01T00:00:00.000Z, before the start asked for/,
  );
});

Deno.test("hostile platform: attempts the merge cannot order within its bound (every notification at the window's start, each with later attempts): exit 6", async () => {
  let id = 0;
  await endsWith(
    {
      "GET /v1/webhooks/:id/notifications": () =>
        json({
          data: Array.from({ length: 100 }, () => notification(`n${++id}`, NOW - 2 * HOUR)),
          next: fresh(),
        }),
      "GET /v1/webhooks/:id/notifications/:n/attempts": () =>
        json({ data: Array.from({ length: 100 }, (_, i) => attempt(NOW - HOUR + i)), next: null }),
    },
    6,
    /cannot be put in time order within 100000 held at once/,
  );
});

Deno.test("hostile platform: a next cursor that repeats: exit 6 naming the cursor", async () => {
  let id = 0;
  await endsWith(
    {
      "GET /v1/webhooks/:id/notifications": (_req, url) =>
        json({
          data: [notification(`n${++id}`, NOW - HOUR)],
          next: url.searchParams.get("pageCursor") === "again" ? "loop" : "again",
        }),
      "GET /v1/webhooks/:id/notifications/:n/attempts": () => json({ data: [], next: null }),
    },
    6,
    /the next cursor "again" repeats one already followed/,
  );
});

Deno.test("hostile platform: an invalid attempt is named as the platform's, not as a line of a file", async () => {
  const r = await endsWith(
    {
      "GET /v1/webhooks/:id/notifications": () =>
        json({ data: [notification("n1", NOW - HOUR)], next: null }),
      "GET /v1/webhooks/:id/notifications/:n/attempts": () =>
        json({ data: [attempt(NOW - HOUR + 1, 99)], next: null }),
    },
    1,
    /The platform listed an invalid attempt: an attempt of notification "n1" sent at .*: responseCode 99/,
  );
  assert.doesNotMatch(r.stderr, /Invalid delivery log|line 1|Fix the line/);
});

Deno.test("breaker simulate --save: SIGTERM mid-read leaves no file (exit 143); a directory is refused before any request", async () => {
  const dir = await Deno.makeTempDir();
  let id = 0;
  const platform = startHostilePlatform({
    "GET /v1/webhooks/:id": webhook,
    // a slow listing without end: the read is stopped, it does not finish
    "GET /v1/webhooks/:id/notifications": async () => {
      await new Promise((r) => setTimeout(r, 20));
      const t = NOW - HOUR + id;
      return json({
        data: Array.from({ length: 100 }, () => notification(`n${++id}`, t)),
        next: fresh(),
      });
    },
    "GET /v1/webhooks/:id/notifications/:n/attempts": (_r, _u, p) =>
      json({ data: [attempt(NOW - HOUR + Number(p.n.slice(1)))], next: null }),
  });
  try {
    const child = simulate(platform.baseUrl, ["--save", `${dir}/why.ndjson`]).spawn();
    try {
      await waitFor(
        "the temporary file to hold lines",
        () =>
          [...Deno.readDirSync(dir)].some((e) =>
            e.name.startsWith("why.ndjson.tmp-") && Deno.statSync(`${dir}/${e.name}`).size > 0
          ),
        // 4 s alone; more than 30 s in a suite run on a machine loaded about ninefold
        90_000,
      );
      child.kill("SIGTERM");
      const out = await child.output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 143, stderr);
      assert.match(stderr, /Stopped by SIGTERM before the read ended: nothing was written to/);
      assert.deepEqual([...Deno.readDirSync(dir)], []);
    } finally {
      try {
        child.kill("SIGKILL");
      } catch { /* ended */ }
    }
    // a directory: refused before the read begins
    const before = platform.requests();
    const r = await runMeasured(simulate(platform.baseUrl, ["--save", dir]), LIMIT_MS);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /Cannot write the log to ".*": it is a directory; give a file name/);
    assert.equal(platform.requests(), before);
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await platform.close();
    await Deno.remove(dir, { recursive: true });
  }
});
