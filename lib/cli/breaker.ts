/**
 * `service breaker simulate|explain`: the replay of breaker.md §3–§5; the rules live in
 * `lib/webhooks/` and `lib/breaker/`, this file is the command: flags, input, output.
 * `--failOnSuspension` exits **8**: breaker.md §5 says 3, but cli.md's exit-code table (the
 * command surface scripts depend on, where 3 means "authentication refused") says 8, and
 * cli.md wins.
 *
 * @module
 */

import {
  type Command,
  connectionFlags,
  formatFlag,
  group,
  leaf,
  type LeafSpec,
} from "./command.ts";
import { CliError, ExitCode, UsageError } from "./errors.ts";
import { type FlagSpecs, type ParsedFlags, parseFlags } from "./flags.ts";
import {
  type BreakerConfig,
  DEFAULT_BREAKER_CONFIG,
  DeliveryLogError,
  readDeliveryLog,
  renderPlot,
} from "../webhooks/mod.ts";
// the plain replay's modules only: the platform's (client, schemas) load with --webhookId
import { explain, whatIfs } from "../breaker/explain.ts";
import { openLog } from "../breaker/file_chunks.ts";
import type { Finding } from "../breaker/platform_check.ts";
import { Replay } from "../breaker/replay.ts";
import { writeWhole } from "../breaker/saved_log.ts";
import { notificationJson, printResult } from "./breaker/tables.ts";
import type { PlatformRead } from "./breaker/from_platform.ts";

/** The policy flags of breaker.md §3 (also what `--compare` accepts). */
const POLICY_FLAGS = {
  window: {
    type: "duration",
    min: 1,
    max: 31_536_000_000,
    placeholder: "DURATION",
    description: "Window W of the error rate, e.g. 30m (default 60m).",
  },
  immediateAbove: {
    type: "number",
    min: 0,
    max: 1,
    default: DEFAULT_BREAKER_CONFIG.immediateAbove,
    placeholder: "RATE",
    description: "Suspend at once when the window's error rate is above this (0 to 1).",
  },
  sustainedFrom: {
    type: "number",
    min: 0,
    max: 1,
    default: DEFAULT_BREAKER_CONFIG.sustainedFrom,
    placeholder: "RATE",
    description: "The band's floor: an error rate at or above this (0 to 1)...",
  },
  sustainedFor: {
    type: "duration",
    min: 1,
    max: 31_536_000_000,
    placeholder: "DURATION",
    description: "...held this long suspends, e.g. 2h (default 4h).",
  },
  minAttempts: {
    type: "integer",
    min: 1,
    max: 1_000_000_000,
    default: DEFAULT_BREAKER_CONFIG.minAttempts,
    placeholder: "N",
    description: "Evaluate only when the window holds at least N attempts.",
  },
  bandResetsAfterIdle: {
    type: "duration",
    min: 1,
    max: 31_536_000_000,
    placeholder: "DURATION",
    description:
      "Forget the band after this long without attempts (default: the band survives quiet periods).",
  },
} as const satisfies FlagSpecs;

/** The flags of `breaker simulate` and `explain`. */
export const SIMULATE_FLAGS = {
  ...POLICY_FLAGS,
  ...formatFlag,
  notifications: {
    type: "boolean",
    description:
      "Add one line per notification: status, attempts, next attempt due. Those that reached COMPLETED or FAILED come first, in that order (a resend after it: a line per series), then those in progress, first seen first; memory holds only these.",
  },
  failOnSuspension: {
    type: "boolean",
    description: "Exit with code 8 when at least one suspension happened (for CI).",
  },
  plot: {
    type: "string",
    placeholder: "FILE",
    description: "Also draw each webhook's error rate, thresholds and suspensions to this file.",
  },
  plotWebhooks: {
    type: "integer",
    min: 1,
    max: 500,
    default: 20,
    placeholder: "N",
    description: "Webhooks drawn by --plot (suspended ones first, then by peak error rate).",
  },
  compare: {
    type: "string",
    takesFlags: true,
    placeholder: "FLAGS",
    description:
      'A second policy to compare with, as policy flags, e.g. --compare "--minAttempts 20".',
  },
  skipInvalid: {
    type: "boolean",
    description: "Count and skip invalid lines instead of stopping at the first (exit 1).",
  },
  sort: {
    type: "boolean",
    description: "Sort the log by time first (buffers the whole log in memory).",
  },
  explain: {
    type: "boolean",
    description:
      "Tell the result in words: each suspension, the error rate and attempts that made it, the thresholds, the what-ifs that avoid it (= breaker explain).",
  },
  webhookId: {
    type: "string",
    env: "SERVICE_WEBHOOK_ID",
    placeholder: "ID",
    description:
      "Read the endpoint's attempts from the platform instead of a log (no FILE; the variable only when nothing is piped in).",
  },
  since: {
    type: "time",
    description: "With --webhookId: the window's start, e.g. 24h (the default) or an ISO time.",
  },
  from: { type: "time", description: "With --webhookId: the window's start (as --since)." },
  to: { type: "time", description: "With --webhookId: the window's end (default: now)." },
  save: {
    type: "string",
    placeholder: "FILE",
    description:
      "With --webhookId: also write the attempts read to FILE (NDJSON), which replays offline to the same result.",
  },
  concurrency: {
    type: "integer",
    min: 1,
    max: 32,
    default: 8,
    placeholder: "N",
    description: "With --webhookId: notifications whose attempts are read at once.",
  },
  ...connectionFlags,
} as const satisfies FlagSpecs;

/** The flags that only mean something with --webhookId. */
const PLATFORM_ONLY = ["since", "from", "to", "save", "concurrency"] as const;

/** Splits a `--compare` value into arguments (single or double quotes group words). */
function splitArgs(text: string): string[] {
  return [...text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}

type PolicyValues = ParsedFlags<typeof POLICY_FLAGS>;

function toConfig(v: PolicyValues, where: string): BreakerConfig {
  // ranges (a window above zero, ...) are the flag layer's: POLICY_FLAGS declare them
  if (v.sustainedFrom > v.immediateAbove) {
    throw new UsageError(
      `--sustained-from (${v.sustainedFrom}) is above --immediate-above (${v.immediateAbove})${where}: the band is [sustained-from, immediate-above]; give a floor at or below the immediate threshold.`,
    );
  }
  return {
    // durations have no `default` in the flag specs so that --help shows "60m", not ms
    windowMs: v.window ?? DEFAULT_BREAKER_CONFIG.windowMs,
    immediateAbove: v.immediateAbove,
    sustainedFrom: v.sustainedFrom,
    sustainedForMs: v.sustainedFor ?? DEFAULT_BREAKER_CONFIG.sustainedForMs,
    minAttempts: v.minAttempts,
    bandResetsAfterIdleMs: v.bandResetsAfterIdle ?? null,
  };
}

/** The `--compare` policy: the main policy with the given flags changed. */
function comparePolicy(text: string, base: PolicyValues, path: string): BreakerConfig {
  const args = splitArgs(text);
  if (args.length === 0) {
    throw new UsageError(
      `Missing value for --compare: expected policy flags such as "--minAttempts 20".`,
    );
  }
  const parsed = parseFlags(POLICY_FLAGS, args, {
    command: `${path} --compare`,
    maxPositionals: 0,
  });
  const merged: Record<string, unknown> = { ...base };
  for (const name of parsed.given) merged[name] = (parsed.flags as Record<string, unknown>)[name];
  return toConfig(merged as PolicyValues, " in --compare");
}

/** The one-line message of a {@linkcode DeliveryLogError}, by its reason code. */
function deliveryLogMessage(e: DeliveryLogError, input: string | undefined): string {
  const name = input ?? "standard input";
  switch (e.reason) {
    case "invalid-line":
      return `Invalid delivery log, ${e.message}. Fix the line, or pass --skip-invalid to count and skip invalid lines.`;
    case "out-of-order": // the message says to pass --sort
      return `Invalid delivery log, ${e.message}.`;
    case "corrupt-gzip":
      return `Cannot read ${name}: it starts like gzip but does not decompress (${e.details}).`;
    case "line-too-long":
      return `Cannot read ${name}: ${e.message}.`;
    case "gzip-trailing-data":
      return `Cannot read ${name}: its gzip data is followed by bytes that are not gzip (trailing garbage, ${e.details}). Refused so that a damaged log is not replayed in part; to ignore them as gzip -d does, pipe it: zcat ${
        input ?? "FILE"
      } | service breaker simulate.`;
  }
}

const simulateSpec: LeafSpec<typeof SIMULATE_FLAGS> = {
  summary: "Replay a delivery log: when would endpoints have been suspended, and what was lost?",
  usage: "[FILE|-] [flags]",
  description: [
    "Reads delivery attempts (NDJSON, or CSV with a header row; .gz is read transparently) from",
    "FILE or standard input, one per line: webhookId, sentTime (epoch ms or ISO 8601; `time` too),",
    "responseCode or failureReason (TIMED_OUT, NO_RESPONSE), and optionally notificationId and",
    'duration. A line {"webhookId":..,"sentTime":..,"action":"enable"} re-enables an endpoint.',
    "Each webhook's lines must be in time order (or pass --sort).",
    "",
    "The platform's rules, replayed with the log's own times: an endpoint is suspended at once",
    "when more than --immediateAbove of the attempts in the last --window failed, or when at",
    "least --sustainedFrom failed for --sustainedFor; attempts while suspended are counted as",
    "suppressed. Exit 0 whether or not anything was suspended (8 with --failOnSuspension),",
    "1 for an invalid line or unreadable input, 2 for bad flags.",
    "",
    "With --webhookId W and no FILE the log is read from the platform: the notifications created in",
    "the window (--since 24h by default, or --from/--to, and 8 h before it for their retries) and",
    "their attempts, --concurrency at a time; --save FILE keeps it for an offline replay. What the",
    "platform's records say against the replay (its status for the endpoint, attempts it made while",
    "the replay has it suspended, attempts the API does not list) is printed after the result.",
  ].join("\n"),
  flags: SIMULATE_FLAGS,
  maxPositionals: 1,
  examples: [
    "service breaker simulate deliveries.ndjson",
    "service breaker simulate deliveries.csv.gz --format ndjson --notifications",
    'service breaker simulate log.ndjson --compare "--minAttempts 20" --format table',
    "service breaker simulate log.ndjson --plot breaker.svg --failOnSuspension",
    "service notifications attempts --webhookId W --notificationId N --format ndjson | service breaker simulate -",
    "service breaker simulate --webhookId W --since 24h --save why.ndjson",
    "service breaker explain --webhookId W --from 2026-01-01T00:00:00Z --to 2026-01-02T00:00:00Z",
  ],
  async run({ flags, positionals, given }, ctx) {
    const out = ctx.out;
    const file = positionals[0];
    if (file !== undefined && given.has("webhookId")) {
      throw new UsageError(
        `Give a log FILE or --webhookId (read from the platform), not both: "${file}" and --webhookId ${flags.webhookId}.`,
      );
    }
    // SERVICE_WEBHOOK_ID alone reads the platform only when nothing is piped in
    const remote = file === undefined && flags.webhookId !== undefined &&
      (given.has("webhookId") || ctx.io.stdinIsTerminal === true);
    const platformOnly = remote ? undefined : PLATFORM_ONLY.find((name) => given.has(name));
    if (platformOnly !== undefined) {
      throw new UsageError(
        `--${platformOnly} reads from the platform: give --webhookId W (and no FILE) with it.`,
      );
    }
    const explainView = flags.explain === true;
    const policyA = toConfig(flags, "");
    const compare = flags.compare === undefined
      ? undefined
      : { flags: flags.compare, config: comparePolicy(flags.compare, flags, ctx.path) };
    // the policies replayed: the flags', then the explanation's what-ifs or --compare's
    const candidates = explainView ? whatIfs(policyA, compare) : [];
    const others = explainView ? candidates.map((c) => c.config) : compare ? [compare.config] : [];
    const policies = [policyA, ...others];
    if (flags.plot !== undefined && !/\.(svg|html?)$/i.test(flags.plot)) {
      throw new UsageError(
        `Invalid value "${flags.plot}" for --plot: expected a file name ending in .svg or .html.`,
      );
    }
    const input = remote
      ? null
      : file === undefined || file === "-"
      ? ctx.io.stdin
      : await openLog(file);
    // Output writes one at a time in call order: warnings never interleave, and come before the result
    const warn = (text: string) => void out.warn(text).catch(() => {});
    const replay = await Replay.create({
      policies,
      // a comparison or an explanation prints no notification lines: none are kept
      notifications: flags.notifications === true && policies.length === 1,
      plot: flags.plot !== undefined,
      witness: explainView || remote,
      sort: flags.sort === true,
      onWarning: warn,
    });
    let platformRead: PlatformRead | null = null;
    try {
      let warnedInvalid = 0;
      let stats;
      try {
        if (remote) {
          const { readFromPlatform } = await import("./breaker/from_platform.ts");
          platformRead = await readFromPlatform(flags, ctx, replay.feed, warn);
          stats = platformRead.stats;
          warnedInvalid = stats.invalidLines;
        } else {
          stats = await readDeliveryLog(input!, replay.feed, {
            skipInvalid: flags.skipInvalid === true,
            notificationIds: flags.notifications === true,
            onInvalid: (e) => {
              if (warnedInvalid++ < 3) warn(`skipped ${e.message}`);
            },
            onProgress: (n) => out.progress(`${n.toLocaleString("en-US")} lines read`),
          });
        }
      } catch (e) {
        await out.clearProgress();
        if (e instanceof DeliveryLogError) {
          throw new CliError(deliveryLogMessage(e, positionals[0]), ExitCode.failed);
        }
        throw e;
      }
      await out.clearProgress();
      await out.debug(
        `read ${stats.lines} line(s) as ${stats.format}: ${stats.records} record(s), ${stats.scanned} by the byte scanner, ${stats.invalidLines} invalid`,
      );
      if (warnedInvalid > 3) warn(`skipped ${warnedInvalid} invalid lines in all.`);
      const result = replay.finish();

      if (flags.plot !== undefined) {
        await writeWhole(
          flags.plot,
          "the plot",
          renderPlot(result, policyA, {
            maxPanels: flags.plotWebhooks,
            kind: /\.html?$/i.test(flags.plot) ? "html" : "svg",
          }),
        );
        await out.debug(`wrote ${flags.plot}`);
      }

      // what the platform's records say against the replay (read from the platform only)
      let findings: Finding[] = [];
      let platformSummary: string | undefined;
      if (platformRead !== null) {
        const check = await import("../breaker/platform_check.ts");
        const { facts, from, to } = platformRead;
        findings = check.platformFindings(result, facts, replay.witness!, from);
        platformSummary = check.platformSummary(facts, from, to);
      }
      if (explainView) {
        const told = explain(result, replay.witness!.suspensions, candidates);
        if (out.format === "table") {
          if (platformSummary !== undefined) await out.text(platformSummary);
          for (const line of told.lines) await out.text(line);
        } else if (out.format === "json") {
          await out.object({ ...told.record, platform: findings });
          findings = [];
        } else await out.object(told.record);
      } else {
        await printResult(
          out,
          result,
          stats.invalidLines,
          replay.spill ? () => notificationJson(replay.spill!, result) : undefined,
        );
      }
      if (findings.length > 0) {
        const { printFindings } = await import("./breaker/from_platform.ts");
        await printFindings(out, findings);
      }
      return flags.failOnSuspension && result.policies[0].suspensions > 0
        ? ExitCode.suspension
        : ExitCode.ok;
    } finally {
      replay.close();
    }
  },
};

const explainSpec: LeafSpec<typeof SIMULATE_FLAGS> = {
  ...simulateSpec,
  summary:
    "Why was an endpoint suspended? `breaker simulate --explain`: the moment, the error rate,\nthe attempts and status codes that made it, the thresholds, and which what-if avoids it.",
  run: (p, ctx) => simulateSpec.run({ ...p, flags: { ...p.flags, explain: true } }, ctx),
};

/** `service breaker` (`simulate`, and `explain`: the same replay told in words). */
export const breakerCommand: Command = group(
  "Replay delivery logs, or an endpoint's attempts read from the platform, against the retry schedule and the circuit breaker.",
  {
    simulate: {
      ...leaf(simulateSpec),
      summary: "Replay a delivery log: suspensions, suppressed attempts, what-if thresholds.",
    },
    explain: {
      ...leaf(explainSpec),
      summary:
        "Why was an endpoint suspended? The replay in words, with the what-ifs that avoid it.",
    },
  },
  {
    description:
      "The input is a delivery log (a file or standard input), or with --webhookId W the endpoint's notifications and attempts read from the platform.",
  },
);
