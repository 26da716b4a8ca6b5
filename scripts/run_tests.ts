/**
 * `deno task test`: installs what the suite needs on a fresh clone (npm
 * packages, with anvil/cast/forge and solc), runs `deno test`, and prints the
 * plain closing line `tests: N passed, N failed, N skipped` that CI reads,
 * preceded by one `skipped: FILE: NAME` line per skipped test. Quiet where
 * nothing is wrong: no `Check …` line per module, no `punycode` deprecation
 * warning from test peers.
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
  const child = new Deno.Command(Deno.execPath(), {
    // --quiet: no `Check file:///…` line per test module (type errors still show); the preload
    // drops Node's `punycode` deprecation warning that test peers (web3's HTTP client) trigger.
    args: [
      "test",
      "-A",
      "--quiet",
      "--preload",
      `${root}tests/support/quiet_deprecations.ts`,
      ...Deno.args,
    ],
    cwd: root,
    env,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = new SummaryReader();
  let pending = "";
  const dec = new TextDecoder();
  for await (const chunk of child.stdout) {
    await Deno.stdout.write(chunk);
    pending += dec.decode(chunk, { stream: true });
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const l of lines) reader.line(l);
  }
  if (pending) reader.line(pending);
  const { code } = await child.status;
  const summary = reader.summary();
  for (const l of closingLines(summary, requireAll)) console.log(l);
  const ok = code === 0 && summary.complete && !(requireAll && summary.skipped.length > 0);
  Deno.exit(ok ? 0 : code || 1);
}
