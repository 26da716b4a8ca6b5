/**
 * `deno task test`: installs what the suite needs on a fresh clone (npm
 * packages, with anvil/cast/forge and solc), runs `deno test`, and prints the
 * plain closing line `tests: N passed, N failed, N skipped` that CI reads,
 * preceded by one `skipped: FILE: NAME` line per skipped test. Quiet where
 * nothing is wrong: no `Check …` line per module, no `punycode` deprecation
 * warning from test peers.
 *
 * Without arguments the suite runs as two `deno test` processes at once: the
 * tests that mostly wait on a slow peer (tests/slow/: forge through custody
 * approvals of a minute and more, its files in parallel with each other) and
 * everything else. The fast process's output is shown as it comes, the slow
 * one's when it ends; the closing line counts both.
 *
 * With `SERVICE_REQUIRE_ALL=1` (set by `.ci/run`) a skipped test is a
 * failure: it is counted among the failed and the exit code is 1.
 *
 * Extra arguments go to `deno test` (e.g. a file or `--filter`).
 *
 * @module
 */

import { ensureNodeModules } from "./ensure_deps.ts";

const root = new URL("..", import.meta.url).pathname;

/** What the closing lines say about a `deno test` run. */
export interface TestSummary {
  /** Tests that passed. */
  passed: number;
  /** Tests that failed. */
  failed: number;
  /** Tests skipped (`ignore`), as `FILE: NAME`. */
  skipped: string[];
  /** True when deno's own summary line was found. */
  complete: boolean;
}

/**
 * Reads `deno test` output (colourless) line by line: the summary counts,
 * and the names of the ignored tests with their files.
 *
 * @example
 * ```ts
 * const r = new SummaryReader();
 * r.line("ok | 2 passed | 0 failed | 1 ignored (1s)");
 * r.summary().skipped.length; // 0 (no test line named one)
 * ```
 */
export class SummaryReader {
  #file = "";
  #skipped: string[] = [];
  #passed = 0;
  #failed = 0;
  #ignored = 0;
  #complete = false;

  /** Feeds one line of output (without its newline). */
  line(raw: string): void {
    // deno-lint-ignore no-control-regex
    const line = raw.replace(/\x1b\[[0-9;]*m/g, "");
    const file = /^running \d+ tests? from (.+)$/.exec(line);
    if (file) this.#file = file[1];
    const ignored = /^(\S.*) \.\.\. ignored(?: \(.*\))?$/.exec(line);
    if (ignored) this.#skipped.push(`${this.#file}: ${ignored[1]}`);
    // e.g. "ok | 12 passed (3 steps) | 0 failed | 1 ignored (3s)" or "FAILED | 11 passed | 1 failed".
    const m =
      /^(ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed(?: \(\d+ steps?\))?(?: \| (\d+) ignored)?/
        .exec(line);
    if (m) {
      this.#passed = Number(m[2]);
      this.#failed = Number(m[3]);
      this.#ignored = Number(m[4] ?? 0);
      this.#complete = true;
    }
  }

  /** The counts so far; an ignored count with no named test still counts. */
  summary(): TestSummary {
    const skipped = [...this.#skipped];
    while (skipped.length < this.#ignored) skipped.push("(unnamed)");
    return { passed: this.#passed, failed: this.#failed, skipped, complete: this.#complete };
  }
}

/** One summary of several `deno test` runs: counts added, complete when every run was. */
export function combineSummaries(runs: TestSummary[]): TestSummary {
  return {
    passed: runs.reduce((n, r) => n + r.passed, 0),
    failed: runs.reduce((n, r) => n + r.failed, 0),
    skipped: runs.flatMap((r) => r.skipped),
    complete: runs.length > 0 && runs.every((r) => r.complete),
  };
}

/** The folder of tests that mostly wait; run as their own process, their files in parallel. */
export const SLOW_TESTS = "tests/slow/";

/**
 * The `deno test` argument lists of a run: the given arguments as one run, or without any,
 * everything but {@linkcode SLOW_TESTS} and, beside it, {@linkcode SLOW_TESTS} in parallel.
 */
export function testRuns(args: string[]): { args: string[]; env: Record<string, string> }[] {
  if (args.length > 0) return [{ args: [...TEST_ARGS, ...args], env: {} }];
  return [
    { args: [...TEST_ARGS, `--ignore=${SLOW_TESTS}`], env: {} },
    // its files wait on forge's 45 s timeouts, not on the CPU: one job each
    { args: [...TEST_ARGS, "--parallel", SLOW_TESTS], env: { DENO_JOBS: "4" } },
  ];
}

/**
 * `deno test`'s own arguments in every run. `--quiet`: no `Check file:///…`
 * line per test module (type errors still show); the preload drops Node's
 * `punycode` deprecation warning that test peers (web3's HTTP client) trigger.
 */
export const TEST_ARGS: readonly string[] = [
  "test",
  "-A",
  "--quiet",
  "--preload",
  `${root}tests/support/quiet_deprecations.ts`,
];

/** Runs one `deno test` process; `live` shows its output as it comes, else at the end. */
async function runOne(
  run: { args: string[]; env: Record<string, string> },
  env: Record<string, string>,
  live: boolean,
): Promise<{ code: number; summary: TestSummary }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: run.args,
    cwd: root,
    env: { ...env, ...run.env },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = new SummaryReader();
  const held: Uint8Array[] = [];
  let pending = "";
  const dec = new TextDecoder();
  for await (const chunk of child.stdout) {
    if (live) await Deno.stdout.write(chunk);
    else held.push(chunk);
    pending += dec.decode(chunk, { stream: true });
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const l of lines) reader.line(l);
  }
  if (pending) reader.line(pending);
  for (const chunk of held) await Deno.stdout.write(chunk);
  const { code } = await child.status;
  return { code, summary: reader.summary() };
}

/**
 * The closing lines for a summary: one per skipped test, then
 * `tests: N passed, N failed, N skipped`. With `requireAll`, skips count as failures.
 */
export function closingLines(s: TestSummary, requireAll: boolean): string[] {
  if (!s.complete) return ["tests: 0 passed, 1 failed, 0 skipped"];
  const out = s.skipped.map((name) => `skipped: ${name}`);
  if (requireAll && s.skipped.length > 0) {
    out.push(`tests: SERVICE_REQUIRE_ALL=1 forbids skipping, so the skipped count as failed`);
  }
  const failed = s.failed + (requireAll ? s.skipped.length : 0);
  out.push(`tests: ${s.passed} passed, ${failed} failed, ${s.skipped.length} skipped`);
  return out;
}

if (import.meta.main) {
  await ensureNodeModules("test");
  const requireAll = Deno.env.get("SERVICE_REQUIRE_ALL") === "1";
  const env: Record<string, string> = {
    DENO_TLS_CA_STORE: "system",
    RUST_BACKTRACE: "0",
    NO_COLOR: "1",
  };
  if (requireAll) env.SERVICE_REQUIRE_ALL = "1";
  const runs = await Promise.all(
    testRuns(Deno.args).map((run, i) => runOne(run, env, i === 0)),
  );
  const summary = combineSummaries(runs.map((r) => r.summary));
  for (const l of closingLines(summary, requireAll)) console.log(l);
  const code = runs.find((r) => r.code !== 0)?.code ?? 0;
  const ok = code === 0 && summary.complete && !(requireAll && summary.skipped.length > 0);
  Deno.exit(ok ? 0 : code || 1);
}
