/**
 * `breaker simulate --jobs N` (issue 15): the log's webhooks split across
 * worker threads must give exactly what one thread gives — the same stdout
 * (events, notifications, summary, in the same order), the same warnings and
 * the same exit code and error — on every golden fixture and on generated
 * logs with many webhooks, control lines, invalid lines and lines that name
 * a webhook twice. Black-box: `main.ts` spawned as a user runs it.
 */
import assert from "node:assert/strict";
import { runCli } from "../support/tools.ts";
import { lineClaim, webhookPartition } from "../../lib/webhooks/log/delivery_log.ts";

const DIR = new URL("../fixtures/breaker/", import.meta.url).pathname;

/** Runs `breaker simulate FILE ...args` with --jobs 1 and with each of `jobs`; all must agree. */
async function sameAcrossJobs(file: string, args: string[], jobs = [2, 3]) {
  const one = await runCli(["breaker", "simulate", file, ...args, "--jobs", "1"]);
  for (const n of jobs) {
    const many = await runCli(["breaker", "simulate", file, ...args, "--jobs", String(n)]);
    const what = `${file} ${args.join(" ")} --jobs ${n}`;
    assert.equal(many.code, one.code, `exit code of ${what}\n${many.stderr}`);
    assert.equal(many.stderr, one.stderr, `stderr of ${what}`);
    assert.equal(many.stdout, one.stdout, `stdout of ${what}`);
  }
  return one;
}

/** Deterministic pseudo-random numbers. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A log of `lines` attempts over `webhooks` endpoints (some healthy, some
 * failing), with notifications retried and resent, control lines, ids with
 * non-ASCII characters and escapes, keys in other orders, and `extra` lines
 * spliced in at given line numbers.
 */
function generateLog(lines: number, webhooks: number, seed: number, extra: Map<number, string>) {
  const rnd = rng(seed);
  const start = Date.UTC(2026, 0, 1);
  const out: string[] = [];
  let n = 0;
  for (let i = 0; i < lines; i++) {
    const line = extra.get(out.length + 1);
    if (line !== undefined) {
      out.push(line);
      continue;
    }
    const ep = Math.floor(rnd() * webhooks);
    const id = ep % 17 === 0 ? `wé-${ep}` : ep % 19 === 0 ? `w\\u0041-${ep}` : `wh-${ep}`;
    const t = start + i * 20_000;
    const bad = ep % 5 === 0 ? 0.9 : ep % 3 === 0 ? 0.55 : 0.05;
    const r = rnd();
    const outcome = r < bad
      ? (rnd() < 0.3 ? `"failureReason":"TIMED_OUT"` : `"responseCode":${rnd() < 0.1 ? 404 : 503}`)
      : `"responseCode":200`;
    if (rnd() < 0.6) n++;
    if (rnd() < 0.01) {
      out.push(`{"webhookId":"${id}","sentTime":${t},"action":"enable"}`);
    } else if (rnd() < 0.1) {
      out.push(
        `{"sentTime":${t}, "notificationId":"n-${n % 500}", ${outcome}, "webhookId":"${id}"}`,
      );
    } else {
      out.push(`{"webhookId":"${id}","notificationId":"n-${n}","sentTime":${t},${outcome}}`);
    }
  }
  return out.join("\n") + "\n";
}

Deno.test("jobs: every golden fixture gives the same output with 1, 2 and 3 worker threads", async () => {
  const files = [...Deno.readDirSync(DIR)]
    .map((e) => e.name)
    .filter((n) => /\.(ndjson|csv|gz)$/.test(n) && !n.includes(".expected."))
    .sort();
  assert.ok(files.length >= 10, `fixtures: ${files}`);
  for (const f of files) {
    await sameAcrossJobs(DIR + f, ["--format", "ndjson", "--notifications"]);
  }
  // the golden outputs themselves still hold with --jobs 2
  const r = await runCli([
    "breaker",
    "simulate",
    DIR + "retries_notifications.ndjson",
    "--notifications",
    "--jobs",
    "2",
  ]);
  assert.equal(r.stdout, await Deno.readTextFile(DIR + "retries_notifications.expected.ndjson"));
  await sameAcrossJobs(DIR + "min_attempts.ndjson", ["--compare", "--min-attempts 3"]);
  await sameAcrossJobs(DIR + "out_of_order.ndjson", []); // the out-of-order error
  await sameAcrossJobs(DIR + "invalid_lines.ndjson", []); // the first invalid line
  await sameAcrossJobs(DIR + "invalid_lines.ndjson", ["--skip-invalid"]);
});

Deno.test("jobs: a generated log with many webhooks gives the same events, notifications, table and summary", async () => {
  const dir = await Deno.makeTempDir({ prefix: "breaker-jobs-" });
  try {
    const extra = new Map<number, string>([
      // a webhook named twice: the last one counts (JSON.parse), in every partition
      [
        50,
        `{"webhookId":"wh-1","webhookId":"wh-2","sentTime":${
          Date.UTC(2026, 0, 1) + 1
        },"responseCode":503}`,
      ],
      [
        51,
        `{"webhookId":"wh-3","webho\\u006bId":"wh-4","sentTime":${
          Date.UTC(2026, 0, 1) + 2
        },"responseCode":503}`,
      ],
    ]);
    const file = `${dir}/log.ndjson`;
    await Deno.writeTextFile(file, generateLog(20_000, 300, 7, extra));
    const one = await sameAcrossJobs(file, ["--format", "ndjson", "--notifications"], [2, 4]);
    const summary = JSON.parse(one.stdout.trim().split("\n").pop()!);
    assert.ok(summary.webhooks >= 300, one.stdout.slice(-300));
    assert.ok(summary.suspensions > 10, "the log suspends endpoints");
    assert.match(one.stdout, /"type":"enabled"/);
    await sameAcrossJobs(file, ["--format", "table", "--notifications"], [2]);
    await sameAcrossJobs(file, ["--format", "json", "--compare", "--min-attempts 5"], [3]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("jobs: invalid and out-of-order lines are reported as with one thread", async () => {
  const dir = await Deno.makeTempDir({ prefix: "breaker-jobs-" });
  try {
    const t = Date.UTC(2026, 0, 2);
    const cases: [string, Map<number, string>][] = [
      ["not JSON", new Map([[3000, `{"webhookId":"wh-9","sentTime":`]])],
      ["no outcome", new Map([[4000, `{"webhookId":"wh-8","sentTime":${t}}`]])],
      ["two bad lines", new Map([[4000, `{"webhookId":"wh-8"}`], [4001, `{"webhookId":"wh-7"}`]])],
      ["back in time", new Map([[5000, `{"webhookId":"wh-5","sentTime":0,"responseCode":200}`]])],
      ["seconds", new Map([[10, `{"webhookId":"wh-5","sentTime":1767225600,"responseCode":200}`]])],
    ];
    for (const [name, extra] of cases) {
      const file = `${dir}/${name.replaceAll(" ", "_")}.ndjson`;
      await Deno.writeTextFile(file, generateLog(8_000, 100, 3, extra));
      const one = await sameAcrossJobs(file, [], [2, 3]);
      if (name !== "seconds") {
        assert.equal(one.code, 1, `${name}: ${one.stderr}`);
        assert.match(one.stderr, /^error: Invalid delivery log, line \d+: /, name);
      }
      // with --skip-invalid: the same warnings (the first three) and counts
      await sameAcrossJobs(file, ["--skip-invalid", "--format", "ndjson"], [2]);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("jobs: a line's claim is its webhook's partition when the line starts with a plain id", () => {
  const enc = new TextEncoder();
  for (const id of ["w1", "wh-0042", "a", "x".repeat(40)]) {
    for (const n of [2, 3, 7]) {
      const b = enc.encode(`{"webhookId":"${id}","sentTime":1,"responseCode":200}`);
      assert.equal(lineClaim(b, 0, b.length, n), webhookPartition(id, n));
    }
  }
  // not a plain prefix: partition 0 answers for it
  const b = enc.encode(`{"sentTime":1,"webhookId":"w1"}`);
  assert.equal(lineClaim(b, 0, b.length, 5), 0);
});
