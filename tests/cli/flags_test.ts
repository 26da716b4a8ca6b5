import { assertEquals, assertRejects } from "../support/expect.ts";
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
  assertEquals(parse(["--apiKey", "a"]).flags.apiKey, "a");
  assertEquals(parse(["--api-key=b"]).flags.apiKey, "b");
  assertEquals(parse(["--page-size", "5"]).flags.pageSize, 5);
  assertEquals(parse([]).flags.pageSize, 100);
});

Deno.test("booleans accept --x, --x=true and --x=false", () => {
  assertEquals(parse(["--dryRun"]).flags.dryRun, true);
  assertEquals(parse(["--dry-run=true"]).flags.dryRun, true);
  assertEquals(parse(["--dryRun=false"]).flags.dryRun, false);
  assertEquals(parse([]).flags.dryRun, undefined);
});

Deno.test("the flag wins over its environment variable", () => {
  assertEquals(parse([], { SERVICE_API_KEY: "env" }).flags.apiKey, "env");
  assertEquals(parse(["--apiKey", "flag"], { SERVICE_API_KEY: "env" }).flags.apiKey, "flag");
});

Deno.test("repeatable flags, choices and lists", () => {
  assertEquals(parse(["--status", "failed", "--status=COMPLETED"]).flags.status, [
    "FAILED",
    "COMPLETED",
  ]);
  assertEquals(parse(["--excludeStatuses="]).flags.excludeStatuses, []);
  assertEquals(parse(["--excludeStatuses", "A,B"]).flags.excludeStatuses, ["A", "B"]);
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
    const e = await assertRejects(() => Promise.resolve().then(() => parse(args)), UsageError);
    assertEquals(re.test(e.message), true, `${args.join(" ")}: ${e.message}`);
  }
});

Deno.test("durations and times", () => {
  assertEquals(parseDuration("60m"), 3_600_000);
  assertEquals(parseDuration("1h30m"), 5_400_000);
  assertEquals(parseDuration("250"), 250);
  assertEquals(parseDuration("4x"), undefined);
  assertEquals(parseTime("1767225600000"), 1767225600000);
  assertEquals(parseTime("2026-01-01T00:00:00Z"), 1767225600000);
  assertEquals(parseTime("24h", () => 100_000_000), 100_000_000 - 86_400_000);
  assertEquals(parseTime("yesterday"), undefined);
});

Deno.test("a durationRange flag takes a duration or MIN-MAX, within its declared bounds", () => {
  assertEquals(parseDurationRange("2m"), { minMs: 120_000, maxMs: 120_000 });
  assertEquals(parseDurationRange("5s-20s"), { minMs: 5000, maxMs: 20_000 });
  assertEquals(parseDurationRange("500ms-1s"), { minMs: 500, maxMs: 1000 });
  for (const bad of ["20s-5s", "5s-", "-5s", "1s-2s-3s", "soon", ""]) {
    assertEquals(parseDurationRange(bad), undefined, bad);
  }
  const delay = { d: { type: "durationRange", min: 0, max: 3_600_000, description: "" } } as const;
  const p = (v: string) => parseFlags(delay, ["--d", v], { command: "service t" }).flags.d;
  assertEquals(p("90s"), { minMs: 90_000, maxMs: 90_000 });
  assertEquals(p("0-1h"), { minMs: 0, maxMs: 3_600_000 });
  assertEquals(parseFlags(delay, [], { command: "service t" }).flags.d, undefined);
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
    assertEquals(caught instanceof UsageError, true, v);
    assertEquals(message.test((caught as Error).message), true, (caught as Error).message);
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
  assertEquals(id, "w1");
  assertEquals(parseRequired(["--tags", "a"], { SERVICE_WEBHOOK_ID: "w2" }).flags.webhookId, "w2");
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
    const e = await assertRejects(
      () => Promise.resolve().then(() => parseRequired(args, env)),
      UsageError,
    );
    assertEquals(e.message, message, args.join(" "));
  }
  // --help is answered before flags are parsed: a required flag does not stand in its way
  // (tests/cli/help_style_test.ts); a declaration that is required and has a default is refused.
  await assertRejects(
    () =>
      Promise.resolve().then(() =>
        checkFlagSpecs({ x: { type: "string", required: true, default: "a", description: "" } })
      ),
    TypeError,
  );
});
