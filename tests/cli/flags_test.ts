import assert from "node:assert/strict";
import {
  parseDuration,
  parseDurationRange,
  parseFlags,
  parseTime,
  UsageError,
} from "../../lib/cli/mod.ts";
import { checkFlagSpecs } from "../../lib/cli/flags.ts";

const specs = {
  apiKey: { type: "string", env: "SERVICE_API_KEY", description: "" },
  dryRun: { type: "boolean", description: "" },
  pageSize: { type: "integer", min: 1, max: 100, default: 100, description: "" },
  status: {
    type: "string",
    multiple: true,
    choices: ["FAILED", "COMPLETED"],
    upper: true,
    description: "",
  },
  excludeStatuses: { type: "list", description: "" },
  window: { type: "duration", min: 1, max: 86_400_000, description: "" },
} as const;

const parse = (args: string[], env: Record<string, string> = {}) =>
  parseFlags(specs, args, { command: "service t", env: (n) => env[n] });

Deno.test("camelCase, kebab-case, --x value and --x=value all parse", () => {
  assert.deepEqual(parse(["--apiKey", "a"]).flags.apiKey, "a");
  assert.deepEqual(parse(["--api-key=b"]).flags.apiKey, "b");
  assert.deepEqual(parse(["--page-size", "5"]).flags.pageSize, 5);
  assert.deepEqual(parse([]).flags.pageSize, 100);
});

Deno.test("booleans accept --x, --x=true and --x=false", () => {
  assert.deepEqual(parse(["--dryRun"]).flags.dryRun, true);
  assert.deepEqual(parse(["--dry-run=true"]).flags.dryRun, true);
  assert.deepEqual(parse(["--dryRun=false"]).flags.dryRun, false);
  assert.deepEqual(parse([]).flags.dryRun, undefined);
});

Deno.test("the flag wins over its environment variable", () => {
  assert.deepEqual(parse([], { SERVICE_API_KEY: "env" }).flags.apiKey, "env");
  assert.deepEqual(parse(["--apiKey", "flag"], { SERVICE_API_KEY: "env" }).flags.apiKey, "flag");
});

Deno.test("repeatable flags, choices and lists", () => {
  assert.deepEqual(parse(["--status", "failed", "--status=COMPLETED"]).flags.status, [
    "FAILED",
    "COMPLETED",
  ]);
  assert.deepEqual(parse(["--excludeStatuses="]).flags.excludeStatuses, []);
  assert.deepEqual(parse(["--excludeStatuses", "A,B"]).flags.excludeStatuses, ["A", "B"]);
});

Deno.test("bad values are usage errors naming the flag and the accepted form", async () => {
  const cases: [string[], RegExp][] = [
    [["--pageSize", "0"], /--pageSize: expected 1 to 100/],
    [["--pageSize", "x"], /--pageSize: expected a whole number/],
    [["--dryRun=maybe"], /--dryRun: expected true or false/],
    [["--status", "LOST"], /expected one of FAILED, COMPLETED/],
    [["--window", "5 minutes"], /--window: expected a duration/],
    [["--apiKey"], /Missing value for --apiKey/],
    [["--bogus"], /Unknown flag "--bogus"/],
  ];
  for (const [args, re] of cases) {
    await assert.rejects(() => Promise.resolve().then(() => parse(args)), (e) => {
      assert.ok(e instanceof UsageError, `${args.join(" ")}: ${e}`);
      assert.deepEqual(re.test(e.message), true, `${args.join(" ")}: ${e.message}`);
      return true;
    });
  }
});

Deno.test("durations and times", () => {
  assert.deepEqual(parseDuration("60m"), 3_600_000);
  assert.deepEqual(parseDuration("1h30m"), 5_400_000);
  assert.deepEqual(parseDuration("250"), 250);
  assert.deepEqual(parseDuration("4x"), undefined);
  assert.deepEqual(parseTime("1767225600000"), 1767225600000);
  assert.deepEqual(parseTime("2026-01-01T00:00:00Z"), 1767225600000);
  assert.deepEqual(parseTime("24h", () => 100_000_000), 100_000_000 - 86_400_000);
  assert.deepEqual(parseTime("yesterday"), undefined);
});

Deno.test("a durationRange flag takes a duration or MIN-MAX, within its declared bounds", () => {
  assert.deepEqual(parseDurationRange("2m"), { minMs: 120_000, maxMs: 120_000 });
  assert.deepEqual(parseDurationRange("5s-20s"), { minMs: 5000, maxMs: 20_000 });
  assert.deepEqual(parseDurationRange("500ms-1s"), { minMs: 500, maxMs: 1000 });
  for (const bad of ["20s-5s", "5s-", "-5s", "1s-2s-3s", "soon", ""]) {
    assert.deepEqual(parseDurationRange(bad), undefined, bad);
  }
  const delay = { d: { type: "durationRange", min: 0, max: 3_600_000, description: "" } } as const;
  const p = (v: string) => parseFlags(delay, ["--d", v], { command: "service t" }).flags.d;
  assert.deepEqual(p("90s"), { minMs: 90_000, maxMs: 90_000 });
  assert.deepEqual(p("0-1h"), { minMs: 0, maxMs: 3_600_000 });
  assert.deepEqual(parseFlags(delay, [], { command: "service t" }).flags.d, undefined);
  for (
    const [v, message] of [
      ["2h", /Invalid value "2h" for --d: expected durations from 0ms to 1h\./],
      ["9s-1s", /--d: expected a duration such as 90s or 2m, or a range MIN-MAX/],
    ] as const
  ) {
    let caught: unknown;
    try {
      p(v);
    } catch (e) {
      caught = e;
    }
    assert.deepEqual(caught instanceof UsageError, true, v);
    assert.deepEqual(message.test((caught as Error).message), true, (caught as Error).message);
  }
});

Deno.test("a required flag: given on the command line or by a source, else a usage error naming it and its variable", async () => {
  const required = {
    webhookId: {
      type: "string",
      env: "SERVICE_WEBHOOK_ID",
      placeholder: "ID",
      required: true,
      description: "",
    },
    tags: { type: "list", placeholder: "TAG", required: true, description: "" },
  } as const;
  const parseRequired = (args: string[], env: Record<string, string> = {}) =>
    parseFlags(required, args, { command: "service t", env: (n) => env[n] });
  // The type of a required flag's value has no `undefined`.
  const id: string = parseRequired(["--webhookId", "w1", "--tags", "a"]).flags.webhookId;
  assert.deepEqual(id, "w1");
  assert.deepEqual(
    parseRequired(["--tags", "a"], { SERVICE_WEBHOOK_ID: "w2" }).flags.webhookId,
    "w2",
  );
  const missing: [string[], Record<string, string>, string][] = [
    [
      ["--tags", "a"],
      {},
      'Missing --webhookId for "service t": give --webhookId <ID> or set SERVICE_WEBHOOK_ID.',
    ],
    // empty counts as missing, on the command line and in the environment
    [
      ["--webhookId=", "--tags", "a"],
      { SERVICE_WEBHOOK_ID: "w2" },
      'Missing --webhookId for "service t": give --webhookId <ID> or set SERVICE_WEBHOOK_ID.',
    ],
    [
      ["--tags", "a"],
      { SERVICE_WEBHOOK_ID: "" },
      'Missing --webhookId for "service t": give --webhookId <ID> or set SERVICE_WEBHOOK_ID.',
    ],
    // without a variable the message names none
    [["--webhookId", "w1", "--tags="], {}, 'Missing --tags for "service t": give --tags <TAG>.'],
  ];
  for (const [args, env, message] of missing) {
    await assert.rejects(() => Promise.resolve().then(() => parseRequired(args, env)), (e) => {
      assert.ok(e instanceof UsageError, `${args.join(" ")}: ${e}`);
      assert.deepEqual(e.message, message, args.join(" "));
      return true;
    });
  }
  // --help is answered before flags are parsed: a required flag does not stand in its way
  // (tests/cli/help_style_test.ts); a declaration that is required and has a default is refused.
  await assert.rejects(
    () =>
      Promise.resolve().then(() =>
        checkFlagSpecs({ x: { type: "string", required: true, default: "a", description: "" } })
      ),
    TypeError,
  );
});
