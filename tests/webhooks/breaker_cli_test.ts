/**
 * Black-box tests: `main.ts breaker ...` spawned as a user runs it, checking
 * standard output, standard error and the exit code (cli.md).
 */
import assert from "node:assert/strict";
import { runCli } from "../support/tools.ts";

const DIR = new URL("../fixtures/breaker/", import.meta.url).pathname;

Deno.test("cli: a log on standard input, ndjson when stdout is not a terminal", async () => {
  const r = await runCli(["breaker", "simulate"], {
    stdin: await Deno.readTextFile(DIR + "exactly_80_percent.ndjson"),
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.equal(r.stdout, await Deno.readTextFile(DIR + "exactly_80_percent.expected.ndjson"));
});

Deno.test("cli: --fail-on-suspension exits 8 when something was suspended, 0 otherwise", async () => {
  const bad = await runCli([
    "breaker",
    "simulate",
    DIR + "window_boundary.ndjson",
    "--fail-on-suspension",
  ]);
  assert.equal(bad.code, 8);
  assert.match(bad.stdout, /"type":"suspended"/);
  const good = await runCli([
    "breaker",
    "simulate",
    DIR + "retries_notifications.ndjson",
    "--failOnSuspension",
  ]);
  assert.equal(good.code, 0);
});

Deno.test("cli: an invalid line exits 1 naming the line and the field, without a stack trace", async () => {
  const r = await runCli(["breaker", "simulate", DIR + "invalid_lines.ndjson"]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr.trim().split("\n").length,
    1,
    `one line expected:\n${r.stderr}`,
  );
  assert.match(r.stderr, /^error: Invalid delivery log, line 2: not valid JSON .*--skip-invalid/);
  const missing = await runCli(["breaker", "simulate", "-"], {
    stdin:
      '{"webhookId":"w1","sentTime":1767225600000,"responseCode":200}\n{"webhookId":"w1","sentTime":1767225601000}\n',
  });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /line 2: responseCode or failureReason is missing/);
  assert.doesNotMatch(missing.stderr, /\bat .*\.ts:\d+/);
});

Deno.test("cli: a webhook going back in time names both lines and suggests --sort", async () => {
  const r = await runCli(["breaker", "simulate", DIR + "out_of_order.ndjson"]);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /line 4: time 2026-01-01T00:00:01\.000Z of webhook "w2" is earlier than line 2 \(2026-01-01T00:00:05\.000Z\).*--sort/,
  );
});

Deno.test("cli: bad flags exit 2 and name the accepted form", async () => {
  const cases: [string[], RegExp][] = [
    [["--window", "soon"], /--window: expected a duration such as 500ms, 30s, 60m, 4h/],
    [["--window", "0"], /--window: expected a duration from 1ms to 365d\./],
    [["--immediate-above", "1.5"], /--immediateAbove: expected 0 to 1/],
    [["--sustained-from", "0.9"], /--sustained-from \(0\.9\) is above --immediate-above \(0\.8\)/],
    [["--min-attempts", "0"], /--minAttempts: expected 1 to 1000000000\./],
    [["--sustained-for", "4 hours"], /--sustainedFor: expected a duration/],
    [["--band-resets-after-idle", "x"], /--bandResetsAfterIdle: expected a duration/],
    [["--format", "xml"], /--format: expected one of table, json, ndjson/],
    [["--plot", "out.png"], /--plot: expected a file name ending in \.svg or \.html/],
    [
      ["--compare", "--min-atempts 20"],
      /Unknown flag "--min-atempts" for "service breaker simulate --compare"\. Did you mean --minAttempts\?/,
    ],
    [["--compare", "--window never"], /--window: expected a duration/],
    [["--frobnicate"], /Unknown flag "--frobnicate"/],
  ];
  for (const [args, want] of cases) {
    const r = await runCli(["breaker", "simulate", DIR + "min_attempts.ndjson", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, want, args.join(" "));
    assert.equal(r.stdout, "");
  }
});

Deno.test("cli: a missing file exits 1 with what to do", async () => {
  const r = await runCli(["breaker", "simulate", "/nonexistent/deliveries.ndjson"]);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    'error: Cannot read "/nonexistent/deliveries.ndjson": no such file. Check the path.\n',
  );
});

Deno.test("cli: help for the group and the verb", async () => {
  const group = await runCli(["breaker", "--help"]);
  assert.equal(group.code, 0);
  assert.match(group.stdout, /Usage: service breaker <verb> \[flags\]/);
  assert.match(group.stdout, /simulate\s+Replay a delivery log/);
  const verb = await runCli(["breaker", "simulate", "--help"]);
  assert.equal(verb.code, 0);
  for (
    const flag of [
      "--window",
      "--immediateAbove",
      "--sustainedFrom",
      "--sustainedFor",
      "--minAttempts",
      "--bandResetsAfterIdle",
      "--notifications",
      "--failOnSuspension",
      "--plot",
      "--compare",
      "--skipInvalid",
      "--sort",
      "--format",
    ]
  ) {
    assert.ok(verb.stdout.includes(flag), flag);
  }
});

Deno.test("cli: --compare and --plot together, as a user runs them", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await runCli([
      "breaker",
      "simulate",
      DIR + "min_attempts.ndjson",
      "--compare",
      "--min-attempts 3",
      "--plot",
      `${dir}/p.svg`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.equal(
      r.stdout,
      await Deno.readTextFile(DIR + "min_attempts.compare.expected.ndjson"),
    );
    // the picture is of policy A (the flags): its two suspensions, one panel per webhook
    const svg = await Deno.readTextFile(`${dir}/p.svg`);
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    const markers = [...svg.matchAll(/<g class="suspension" data-webhook-id="([^"]*)"/g)]
      .map((m) => m[1]).sort();
    assert.deepEqual(markers, ["w1", "w2"]);
    assert.equal(svg.match(/<g class="endpoint"/g)?.length, 2);
    // --compare=VALUE works the same; a --plot name that is not .svg/.html exits 2, writing nothing
    const eq = await runCli([
      "breaker",
      "simulate",
      DIR + "min_attempts.ndjson",
      "--compare=--min-attempts 3",
    ]);
    assert.equal(eq.code, 0, eq.stderr);
    assert.equal(eq.stdout, r.stdout);
    const bad = await runCli([
      "breaker",
      "simulate",
      DIR + "min_attempts.ndjson",
      "--plot",
      `${dir}/p.png`,
    ]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, "");
    assert.match(
      bad.stderr,
      /^error: Invalid value ".*p\.png" for --plot: expected a file name ending in \.svg or \.html\./,
    );
    assert.equal(await Deno.stat(`${dir}/p.png`).then(() => true, () => false), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
