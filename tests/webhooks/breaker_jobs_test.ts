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
import { csvLineClaim, NO_CLAIM, PartitionSkipper } from "../../lib/webhooks/log/line_claim.ts";

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

Deno.test("jobs: a line's claim is its webhook's partition wherever the key is, and none when unsure", () => {
  const enc = new TextEncoder();
  const claim = (line: string, n: number) => {
    const b = enc.encode(line);
    return lineClaim(b, 0, b.length, n);
  };
  for (const id of ["w1", "wh-0042", "a", "x".repeat(40), "webhookId", "k-k-k"]) {
    for (const n of [2, 3, 7]) {
      const want = webhookPartition(id, n);
      assert.equal(claim(`{"webhookId":"${id}","sentTime":1,"responseCode":200}`, n), want);
      // another position, spaces around the colon (Python's json.dumps), a "webhookId" value
      assert.equal(claim(`{"sentTime":1,"responseCode":200,"webhookId":"${id}"}`, n), want);
      assert.equal(claim(`{"sentTime": 1, "webhookId" :\t"${id}", "x": "k"}`, n), want);
      assert.equal(claim(`{"note":"webhookId","webhookId":"${id}"}`, n), want);
    }
  }
  // unsure: every partition reads the line (partition 0 reports it if invalid)
  for (
    const line of [
      `{"sentTime":1,"responseCode":200}`, // no key
      `{"webhookId":"w1","webhookId":"w2"}`, // twice: the last counts
      `{"webhookId":"w1","a":{"webhookId":"w2"}}`, // twice (nested)
      `{"webhookId":"webhookId":"w2"}`, // the id is a second key
      `{"webho\\u006bId":"w2","webhookId":"w1"}`, // a backslash anywhere
      `{"webhookId":"w\\u0031"}`,
      `{"webhookId":"wé"}`, // not plain ASCII
      `{"webhookId":""}`,
      `{"webhookId":12}`,
      `{"webhookId":"w1`, // unterminated
    ]
  ) assert.equal(claim(line, 3), NO_CLAIM, line);
  // CSV: the webhookId cell, trimmed; none when the line has a quote or lacks the cell
  const csv = (line: string, col: number, n: number) => {
    const b = enc.encode(line);
    return csvLineClaim(b, 0, b.length, col, n);
  };
  assert.equal(csv("wh-7,1,200", 0, 3), webhookPartition("wh-7", 3));
  assert.equal(csv("1, wh-7 ,200\r", 1, 3), webhookPartition("wh-7", 3));
  assert.equal(csv("1,200,w\\1", 2, 5), webhookPartition("w\\1", 5)); // a backslash is a letter
  assert.equal(csv('1,"wh-7",200', 1, 3), NO_CLAIM);
  assert.equal(csv("1,200", 2, 3), NO_CLAIM);
  assert.equal(csv("1, ,200", 1, 3), NO_CLAIM);
});

/** Lines of many shapes, from fragments (valid, invalid, tricky), as one ASCII text. */
function shapes(seed: number, count: number): string[] {
  const rnd = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const ids = ["w1", "w2", "wh-10", "wk", "webhookId", "k", "w\\u0031", "wé", ""];
  const parts = [
    () => `"webhookId":"${pick(ids)}"`,
    () => `"webhookId" : "${pick(ids)}"`,
    () => `"sentTime":${Math.floor(rnd() * 1e6)}`,
    () => `"responseCode":${pick([200, 503])}`,
    () => `"note":"${pick(["webhookId", "k", "x\\\\y", '\\"webhookId\\":1'])}"`,
    () => `"a":{"webhookId":"${pick(ids)}"}`,
    () => `"notificationId":"nk-${Math.floor(rnd() * 9)}"`,
  ];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(rnd() * 4);
    const fields = Array.from({ length: n }, () => pick(parts)());
    let line = `{${fields.join(pick([",", ", "]))}}`;
    if (rnd() < 0.05) line = line.slice(0, Math.floor(rnd() * line.length)); // cut short
    out.push(line);
  }
  return out;
}

Deno.test("jobs: the skipper skips only lines another partition claims, by the same rule", () => {
  const enc = new TextEncoder();
  const lines = shapes(11, 3000);
  const bytes = enc.encode(lines.join("\n") + "\n");
  let skipped = 0;
  for (const count of [2, 3]) {
    for (let index = 0; index < count; index++) {
      const skipper = new PartitionSkipper(index, count);
      // the chunk holds a multi-byte character: the skipper declines it
      assert.equal(skipper.begin(bytes, 0, bytes.length), false);
      // line by line, each as its own chunk, so that the ASCII ones are taken
      for (const line of lines) {
        const b = enc.encode(line + "\n");
        const want = lineClaim(b, 0, b.length - 1, count);
        if (!skipper.begin(b, 0, b.length)) continue;
        const nl = skipper.foreign(0);
        if (want === NO_CLAIM || want === index) assert.equal(nl, -1, line);
        else {
          assert.equal(nl, b.length - 1, line); // the claim is another's: skipped
          skipped++;
        }
      }
    }
  }
  assert.ok(skipped > 1000, `skipped ${skipped}`);
  // the same on one chunk of many lines (the cached searches carry across lines)
  const ascii = lines.filter((l) => !/[\u0080-\uffff]/.test(l));
  const chunk = enc.encode(ascii.join("\n") + "\n");
  for (let index = 0; index < 2; index++) {
    const skipper = new PartitionSkipper(index, 2);
    assert.ok(skipper.begin(chunk, 0, chunk.length));
    let start = 0;
    for (const line of ascii) {
      const len = enc.encode(line).length;
      const want = lineClaim(chunk, start, start + len, 2);
      const nl = skipper.foreign(start);
      assert.equal(nl, want === NO_CLAIM || want === index ? -1 : start + len, line);
      start += len + 1;
    }
  }
  // CSV: the cell of the column
  const csvLines = ["wh-1,1,200", "wh-2,1,200", '"wh-3",1,200', " wh-4 ,1,200", "wh-5"];
  const csvChunk = enc.encode(csvLines.join("\n") + "\n");
  const sk = new PartitionSkipper(0, 2);
  sk.csvColumn = 0;
  assert.ok(sk.begin(csvChunk, 0, csvChunk.length));
  let start = 0;
  for (const line of csvLines) {
    const want = csvLineClaim(csvChunk, start, start + line.length, 0, 2);
    assert.equal(sk.foreign(start), want === NO_CLAIM || want === 0 ? -1 : start + line.length);
    start += line.length + 1;
  }
});

Deno.test("jobs: CSV, gzip and JSON with spaces, other key orders and tricky lines give the same output", async () => {
  const dir = await Deno.makeTempDir({ prefix: "breaker-jobs-" });
  try {
    const rnd = rng(5);
    const t0 = Date.UTC(2026, 0, 1);
    const json: string[] = [];
    const csv: string[] = ["sentTime,responseCode,webhookId,notificationId"];
    for (let i = 0; i < 12_000; i++) {
      const ep = Math.floor(rnd() * 120);
      const id = `wk-${ep}`;
      const t = t0 + i * 15_000;
      const code = rnd() < (ep % 4 === 0 ? 0.85 : 0.1) ? 503 : 200;
      const n = `n-${Math.floor(i / 3)}`;
      const shape = i % 5;
      json.push(
        shape === 0
          ? `{"webhookId": "${id}", "sentTime": ${t}, "responseCode": ${code}, "notificationId": "${n}"}`
          : shape === 1
          ? `{"sentTime":${t},"note":"webhookId","responseCode":${code},"webhookId":"${id}"}`
          : `{"webhookId":"${id}","notificationId":"${n}","sentTime":${t},"responseCode":${code}}`,
      );
      csv.push(`${t},${code}, ${id}${shape === 2 ? ` ,${n}\r` : `,${n}`}`);
    }
    // a line whose id is a second key, a nested key and an escaped key
    json.splice(100, 0, `{"webhookId":"webhookId":"wk-1","sentTime":${t0},"responseCode":200}`);
    json.splice(
      200,
      0,
      `{"webhookId":"wk-2","a":{"webhookId":"wk-3"},"sentTime":${
        t0 + 3_000_000
      },"responseCode":503}`,
    );
    json.splice(
      300,
      0,
      `{"webhookId":"wk-4","webho\\u006bId":"wk-5","sentTime":${
        t0 + 4_500_000
      },"responseCode":503}`,
    );
    csv.splice(50, 0, `${t0 + 750_000},503,"wk-6",n-x`, `${t0 + 750_000},oops,wk-7,n-y`);
    const nd = `${dir}/log.ndjson`;
    await Deno.writeTextFile(nd, json.join("\n") + "\n");
    const cs = `${dir}/log.csv`;
    await Deno.writeTextFile(cs, csv.join("\n") + "\n");
    const gz = `${dir}/log.ndjson.gz`;
    await Deno.writeFile(
      gz,
      new Uint8Array(
        await new Response(
          new Blob([json.join("\n") + "\n"]).stream().pipeThrough(new CompressionStream("gzip")),
        ).arrayBuffer(),
      ),
    );
    const args = ["--format", "ndjson", "--notifications", "--skip-invalid"];
    const a = await sameAcrossJobs(nd, args, [2, 3]);
    assert.ok(JSON.parse(a.stdout.trim().split("\n").pop()!).suspensions > 0, a.stdout.slice(-200));
    assert.equal((await sameAcrossJobs(gz, args, [2])).stdout, a.stdout);
    const c = await sameAcrossJobs(cs, args, [2, 3]);
    assert.match(c.stderr, /line 52/); // the invalid CSV line, reported once
    await sameAcrossJobs(nd, ["--format", "table"], [2]);
    // the first invalid line stops every thread count at the same line
    const stop = await sameAcrossJobs(cs, [], [2, 3]);
    assert.equal(stop.code, 1);
    assert.match(stop.stderr, /line 52/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
