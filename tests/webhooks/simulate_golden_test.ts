/**
 * Golden fixtures of `service breaker simulate`: each input under
 * tests/fixtures/breaker/ was written by hand from breaker.md, with the
 * expected output worked out in the `.md` file beside it. The command runs
 * in-process through the real `run()` (only its streams are buffers).
 */
import assert from "node:assert/strict";
import { run } from "../../lib/cli/mod.ts";
import { memoryIo } from "../support/memory_io.ts";

const DIR = new URL("../fixtures/breaker/", import.meta.url).pathname;

async function simulate(args: string[], stdin?: Uint8Array) {
  const io = memoryIo(stdin);
  const code = await run(["breaker", "simulate", ...args], { io });
  return { code, stdout: io.out(), stderr: io.err() };
}

async function expected(name: string): Promise<string> {
  return await Deno.readTextFile(DIR + name);
}

const CASES: {
  name: string;
  input: string;
  args?: string[];
  expected: string;
  stderr?: RegExp;
}[] = [
  {
    name: "exactly 80% is not above 80%; 5 of 6 suspends at once",
    input: "exactly_80_percent.ndjson",
    expected: "exactly_80_percent.expected.ndjson",
  },
  {
    name: "CSV input with a header row gives the same result",
    input: "exactly_80_percent.csv",
    expected: "exactly_80_percent.expected.ndjson",
  },
  {
    name: "exactly 50% is in the band; an attempt one window old is dropped",
    input: "exactly_50_percent.ndjson",
    expected: "exactly_50_percent.expected.ndjson",
  },
  {
    name: "gzip input is read transparently",
    input: "exactly_50_percent.ndjson.gz",
    expected: "exactly_50_percent.expected.ndjson",
  },
  {
    name: "the window is half-open at its old end",
    input: "window_boundary.ndjson",
    expected: "window_boundary.expected.ndjson",
  },
  {
    name: "a band held exactly 4 h across quiet periods suspends at exactly 4 h",
    input: "band_4h_quiet.ndjson",
    expected: "band_4h_quiet.expected.ndjson",
  },
  {
    name: "bandSince survives a quiet period longer than the window",
    input: "band_survives_long_quiet.ndjson",
    args: ["--min-attempts", "2"],
    expected: "band_survives_long_quiet.expected.ndjson",
  },
  {
    name: "--band-resets-after-idle forgets the band after a quiet period",
    input: "band_survives_long_quiet.ndjson",
    args: ["--min-attempts=2", "--band-resets-after-idle", "2h"],
    expected: "band_survives_long_quiet.idle.expected.ndjson",
  },
  {
    name: "--min-attempts 3 holds off evaluation",
    input: "min_attempts.ndjson",
    args: ["--minAttempts", "3"],
    expected: "min_attempts.expected.ndjson",
  },
  {
    name: "with the default minimum the first error suspends and later attempts are suppressed",
    input: "min_attempts.ndjson",
    expected: "min_attempts.default.expected.ndjson",
  },
  {
    name: "--compare reports suspensions avoided and gained per webhook",
    input: "min_attempts.ndjson",
    args: ["--compare", "--min-attempts 3"],
    expected: "min_attempts.compare.expected.ndjson",
  },
  {
    name: "re-enable, suppressed attempts, and notifications that do not count them",
    input: "reenable_suppressed.ndjson",
    args: ["--notifications"],
    expected: "reenable_suppressed.expected.ndjson",
  },
  {
    name:
      "10 failures → FAILED, 404 → FAILED at once, TIMED_OUT/NO_RESPONSE retried; ISO and ms times",
    input: "retries_notifications.ndjson",
    args: ["--notifications"],
    expected: "retries_notifications.expected.ndjson",
  },
  {
    name: "--skip-invalid counts invalid lines",
    input: "invalid_lines.ndjson",
    args: ["--skip-invalid"],
    expected: "invalid_lines.expected.ndjson",
    // the first three are named as warnings, then the count
    stderr:
      /^warning: skipped line 2: not valid JSON .*\nwarning: skipped line 3: responseCode or failureReason is missing.*\nwarning: skipped line 4: not a JSON object.*\nwarning: skipped 5 invalid lines in all\.\n$/,
  },
  {
    name: "--sort sorts a log whose webhooks go back in time",
    input: "out_of_order.ndjson",
    args: ["--sort"],
    expected: "out_of_order.sorted.expected.ndjson",
  },
];

for (const c of CASES) {
  Deno.test(`golden: ${c.name}`, async () => {
    const r = await simulate([DIR + c.input, "--format", "ndjson", ...(c.args ?? [])]);
    if (c.stderr) assert.match(r.stderr, c.stderr);
    else assert.equal(r.stderr, "");
    assert.equal(r.code, 0);
    assert.equal(r.stdout, await expected(c.expected));
  });
}

Deno.test("golden: the same log on standard input (gzip detected by its bytes, not its name)", async () => {
  const gz = await Deno.readFile(DIR + "exactly_50_percent.ndjson.gz");
  const r = await simulate(["-", "--format", "ndjson"], gz);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, await expected("exactly_50_percent.expected.ndjson"));
});

Deno.test("golden: --format json holds the same events and summary", async () => {
  const r = await simulate([
    DIR + "reenable_suppressed.ndjson",
    "--format",
    "json",
    "--notifications",
  ]);
  assert.equal(r.code, 0);
  const lines = (await expected("reenable_suppressed.expected.ndjson")).trim().split("\n").map((
    l,
  ) => JSON.parse(l));
  const doc = JSON.parse(r.stdout);
  assert.deepEqual(doc.events, lines.filter((l) => l.type === "suspended" || l.type === "enabled"));
  assert.deepEqual(doc.notifications, lines.filter((l) => l.type === "notification"));
  assert.deepEqual(doc.summary, lines.at(-1));
});

Deno.test("golden: --format table lists webhooks, suspensions and the summary for people", async () => {
  const r = await simulate([DIR + "exactly_50_percent.ndjson", "--format", "table"]);
  assert.equal(r.code, 0);
  const lines = r.stdout.split("\n");
  assert.match(
    lines[0],
    /^WEBHOOK\s+ATTEMPTS\s+SUSPENSIONS\s+FIRST SUSPENDED\s+PEAK RATE\s+SUPPRESSED$/,
  );
  assert.match(r.stdout, /^w1\s+11\s+1\s+2026-01-01T04:30:00\.000Z\s+50\.0% \(1\/2\)\s+1$/m);
  assert.match(r.stdout, /^w2\s+3\s+0\s+-\s+50\.0% \(1\/2\)\s+0$/m);
  assert.match(
    r.stdout,
    /^2026-01-01T04:30:00\.000Z\s+w1\s+suspended \(sustained\)\s+50\.0% \(1\/2\)\s+2026-01-01T00:30:00\.000Z$/m,
  );
  assert.match(
    r.stdout,
    /2 webhook\(s\), 14 attempt\(s\), 1 suspension\(s\), 1 suppressed attempt\(s\), 0 invalid line\(s\)\./,
  );
});
