/**
 * `deno task test`: installs what the suite needs on a fresh clone (npm
 * packages, with anvil/cast/forge and solc), runs `deno test`, and prints the
 * plain closing line `tests: N passed, N failed, N skipped` that CI reads,
 * preceded by one `skipped: FILE: NAME` line per skipped test. Quiet where
 * nothing is wrong: no `Check …` line per module, no `punycode` deprecation
 * warning from test peers.
 *
 * Without arguments (see {@linkcode testPlan}): tests/slow/ (files that
 * wait a minute or more on forge, in parallel with each other) starts at once, and
 * beside it one `deno check --doc` of every test file and of every module of
 * `lib/` with `mod.ts`, their `@example`s included (the only type check:
 * one program, so `lib/` is checked once; a failure fails the run, counted
 * as one failed test), and the main group as one
 * `deno test --parallel` process (its files side by side, at most
 * `SERVICE_TEST_JOBS` at once, default {@linkcode defaultJobs}; the longest
 * first, {@linkcode LONG_FIRST}: a parallel run ends when its longest file
 * does) followed by {@linkcode ALONE} (files whose assertions hold a real-time
 * window of a fraction of a second, {@linkcode ALONE_JOBS} at once with nothing
 * of the main group beside them). The check runs beside the tests rather than
 * before them (it takes about 25 s of one core; the tests mostly wait on their
 * peers). Tests of the main
 * group may run beside any other: servers on port 0, scratch files in their
 * own temporary directories. The main group's output is shown as it comes,
 * the slow group's when it ends; the closing line counts every run.
 *
 * `SERVICE_TEST_JUNIT=FILE` also writes deno's JUnit report there;
 * `deno run -A scripts/test_profile.ts FILE` prints the time of each file
 * from it.
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
    // `--parallel` names the file on each line: "./a_test.ts => name ... ignored (0ms)"; a step
    // there is "./a_test.ts => test ... step ... ignored"
    const parallel = /^(\.\/\S+) => (.*) \.\.\. ignored(?: \(.*\))?$/.exec(line);
    const ignored = /^(\S.*) \.\.\. ignored(?: \(.*\))?$/.exec(line);
    if (parallel) {
      if (!parallel[2].includes(" ... ")) this.#skipped.push(`${parallel[1]}: ${parallel[2]}`);
    } else if (ignored) this.#skipped.push(`${this.#file}: ${ignored[1]}`);
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

/** What a failed type check adds to a run's summary: one failed test. */
export const CHECK_FAILED: TestSummary = { passed: 0, failed: 1, skipped: [], complete: true };

/** One summary of several `deno test` runs: counts added, complete when every run was. */
export function combineSummaries(runs: TestSummary[]): TestSummary {
  return {
    passed: runs.reduce((n, r) => n + r.passed, 0),
    failed: runs.reduce((n, r) => n + r.failed, 0),
    skipped: runs.flatMap((r) => r.skipped),
    complete: runs.length > 0 && runs.every((r) => r.complete),
  };
}

/**
 * The files (or folders, ending in `/`) that run longest, in that order: started first, so that
 * the run does not end with one long file alone. From the profile of a whole run
 * (`SERVICE_TEST_JUNIT`, `scripts/test_profile.ts`).
 */
export const LONG_FIRST: readonly string[] = [
  "tests/scripts/pack_fresh_clone_test.ts",
  "tests/e2e/notifications_cli_test.ts",
  "tests/package/npm_package_test.ts",
  "tests/cli/hostile_peer_test.ts",
  "tests/e2e/rpc_slow_clients_test.ts",
  "tests/emulator/api_test.ts",
  "tests/e2e/readme_commands_test.ts",
  "tests/breaker/hostile_platform_test.ts",
  "tests/e2e/rpc_clients_test.ts",
  "tests/emulator/cli_test.ts",
  "tests/emulator/api_users_test.ts",
  "tests/emulator/webhooks_paging_test.ts",
  "tests/torture/flood_test.ts",
  "tests/rpc/bridge_flags_test.ts",
  "tests/e2e/rpc_faults_test.ts",
  "tests/e2e/readme_commands_webhooks_test.ts",
  "tests/emulator/breaker_from_platform_test.ts",
  "tests/e2e/console_browser_test.ts",
  "tests/e2e/readme_commands_rpc_test.ts",
  "tests/cli/terminal_test.ts",
];

/**
 * Files that must not run beside the main group: each holds a real-time window of a fraction
 * of a second (custody delays of 100-250 ms against an 80 ms client, a breaker window of 1 s at
 * `--timeScale 3600`, retries at `--timeScale 10000`), which a 2-core machine busy with five
 * other test files misses; they failed in a parallel run and pass alone. rpc_ws_clients_test's
 * ethers subscription lost its event beside the main group on a loaded machine (not understood;
 * it passes alone). They run {@linkcode ALONE_JOBS} at once: they mostly wait on timers. In
 * this order, the longest first (alone: 16, 10, 7, 7, 6 and 4 s).
 */
export const ALONE: readonly string[] = [
  "tests/e2e/rpc_slow_faults_test.ts",
  "tests/emulator/custody_delays_cli_test.ts",
  "tests/emulator/webhooks_breaker_test.ts",
  "tests/emulator/webhooks_retry_test.ts",
  "tests/emulator/custody_delays_test.ts",
  "tests/e2e/rpc_ws_clients_test.ts",
];

/**
 * How many {@linkcode ALONE} files run at once: two (31-35 s instead of 54 s one by one; five
 * runs of two at once passed on this machine, two of them beside a process taking a whole core).
 */
export const ALONE_JOBS = 2;

/** The folder of tests that mostly wait on forge: their own process, beside the others. */
export const SLOW_TESTS = "tests/slow/";

/**
 * How many files of the main group run at once by default: twice the cores (a test mostly
 * waits on its real peers: anvil, the emulator, forge, a browser).
 */
export function defaultJobs(cores: number = navigator.hardwareConcurrency): number {
  return 2 * cores;
}

/** Every `*_test.ts` under `tests/` of `root`, as paths relative to it, by name. */
export function testFiles(root: string): Promise<string[]> {
  return filesUnder(root, "tests/", "_test.ts");
}

/**
 * The modules whose `@example`s the one type check checks too: every `.ts` of `lib/` of `root`
 * and `mod.ts`, relative to it, by name.
 */
export async function documentedModules(root: string): Promise<string[]> {
  return [...await filesUnder(root, "lib/", ".ts"), "mod.ts"];
}

/** Every file under `dir` of `root` whose name ends with `suffix`, relative to `root`, by name. */
async function filesUnder(root: string, dir: string, suffix: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(`${root}${dir}`)) {
      if (e.isDirectory) await walk(`${dir}${e.name}/`);
      else if (e.isFile && e.name.endsWith(suffix)) out.push(`${dir}${e.name}`);
    }
  };
  await walk(dir);
  return out.sort();
}

/** `files` with those {@linkcode LONG_FIRST} names first, in its order, then the rest in theirs. */
export function longFirst(files: string[], long: readonly string[] = LONG_FIRST): string[] {
  const first = long.flatMap((l) =>
    files.filter((f) => l.endsWith("/") ? f.startsWith(l) : f === l)
  );
  return [...new Set(first), ...files.filter((f) => !first.includes(f))];
}

/** One `deno` process of a run: its arguments and extra environment. */
export interface Run {
  /** `deno` arguments. */
  args: string[];
  /** Added to the environment. */
  env: Record<string, string>;
}

/**
 * What a run does: `beside`, `check` (when given; a failure fails the run) and `sequence` (one
 * run after the other) start at once.
 */
export interface TestPlan {
  /** The one type check (`--doc`: examples too), beside `sequence` from the start. */
  check?: Run;
  /** The main group, then the files that run alone. */
  sequence: Run[];
  /** The slow group, from the start: beside the check and the sequence. */
  beside: Run[];
}

/**
 * The plan of a run: with arguments, exactly what they ask, as one `deno test` (it type-checks
 * what it runs); without, every file of `files`: tests/slow/, one type check of `files` and
 * `documented` with their examples, and the main group in parallel (`jobs` at once, the longest
 * first) followed by {@linkcode ALONE} ({@linkcode ALONE_JOBS} at once), all three from the
 * start; no test run checks types again (`--no-check`).
 */
export function testPlan(
  args: string[],
  files: string[] = [],
  jobs: number = defaultJobs(),
  documented: string[] = [],
): TestPlan {
  if (args.length > 0) {
    return { sequence: [{ args: [...TEST_ARGS, ...args], env: {} }], beside: [] };
  }
  const slow = files.filter((f) => f.startsWith(SLOW_TESTS));
  const alone = ALONE.filter((f) => files.includes(f));
  const main = files.filter((f) => !slow.includes(f) && !alone.includes(f));
  const test = [...TEST_ARGS, "--no-check"];
  return {
    check: { args: ["check", "--quiet", "--doc", ...documented, ...files], env: {} },
    sequence: [
      { args: [...test, "--parallel", ...longFirst(main)], env: { DENO_JOBS: String(jobs) } },
      ...(alone.length
        ? [{ args: [...test, "--parallel", ...alone], env: { DENO_JOBS: String(ALONE_JOBS) } }]
        : []),
    ],
    // its files wait on forge's 45 s timeouts and 70 s approvals, not on the CPU: one job each,
    // from the start (the approval tests, about 75 s each, are the longest)
    beside: slow.length
      ? [{ args: [...test, "--parallel", ...slow], env: { DENO_JOBS: String(slow.length) } }]
      : [],
  };
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
  const jobs = Number(Deno.env.get("SERVICE_TEST_JOBS") || defaultJobs());
  const junit = Deno.env.get("SERVICE_TEST_JUNIT");
  const whole = Deno.args.length === 0;
  const files = whole ? await testFiles(root) : [];
  const plan = testPlan(Deno.args, files, jobs, whole ? await documentedModules(root) : []);
  // each run writes its own JUnit report: FILE, then FILE.2, FILE.3, ...
  let reports = 0;
  const withJunit = (run: Run): Run => {
    if (!junit) return run;
    const path = reports++ === 0 ? junit : `${junit}.${reports}`;
    return {
      ...run,
      args: [...run.args.slice(0, 2), `--junit-path=${path}`, ...run.args.slice(2)],
    };
  };
  const sequence = plan.sequence.map(withJunit);
  const beside = plan.beside.map(withJunit);
  const besideRuns = Promise.all(beside.map((run) => runOne(run, env, false)));
  // the type check runs beside the tests (which do not check again): a failed check fails the
  // run, counted as one failed test, after every test has ended
  const checked = plan.check
    ? new Deno.Command(Deno.execPath(), {
      args: plan.check.args,
      cwd: root,
      env,
      stdout: "inherit",
      stderr: "inherit",
    }).output().then(({ code }) => code)
    : Promise.resolve(0);
  const inOrder = async () => {
    const out = [];
    for (const run of sequence) out.push(await runOne(run, env, true));
    return out;
  };
  const [first, second, checkCode] = await Promise.all([inOrder(), besideRuns, checked]);
  if (checkCode !== 0) {
    console.error("deno check failed (see its errors above): the run fails");
    first.push({ code: checkCode, summary: CHECK_FAILED });
  }
  const runs = [...first, ...second];
  const summary = combineSummaries(runs.map((r) => r.summary));
  for (const l of closingLines(summary, requireAll)) console.log(l);
  const code = runs.find((r) => r.code !== 0)?.code ?? 0;
  const ok = code === 0 && summary.complete && !(requireAll && summary.skipped.length > 0);
  Deno.exit(ok ? 0 : code || 1);
}
