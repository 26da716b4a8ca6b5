/**
 * Where a test run's time went, per file: reads the JUnit report that
 * `SERVICE_TEST_JUNIT=FILE deno task test` writes (deno's `--junit-path`) and
 * prints each file's tests' summed time, longest first, with its share of
 * the sum. Tests of one file run one after another, so a file's sum is about
 * its time in the run (module load and `beforeAll` aside); the longest ones
 * belong in `LONG_FIRST` (`scripts/run_tests.ts`).
 *
 * `deno run -A scripts/test_profile.ts FILE...` (each run of `deno task test` writes its own
 * report: FILE, FILE.2, ...; give them all). `PROFILE_ROWS=N`: N rows (default 25).
 *
 * @module
 */

/** One file's tests: how many and their summed time, seconds. */
export interface FileTime {
  /** The test file (the module that defined the tests). */
  file: string;
  /** Its tests. */
  tests: number;
  /** Their summed time, seconds. */
  seconds: number;
}

/**
 * The per-file times of a JUnit report, longest first.
 *
 * @example
 * ```ts
 * fileTimes('<testcase name="a" classname="./tests/x_test.ts" time="1.5">');
 * // [{ file: "tests/x_test.ts", tests: 1, seconds: 1.5 }]
 * ```
 */
export function fileTimes(junit: string): FileTime[] {
  const cases = [...junit.matchAll(/<testcase\b[^>]*>/g)].map((m) => ({
    name: /\bname="([^"]*)"/.exec(m[0])?.[1] ?? "",
    file: /\bclassname="([^"]*)"/.exec(m[0])?.[1].replace(/^\.\//, "") ?? "?",
    seconds: Number(/\btime="([^"]*)"/.exec(m[0])?.[1] ?? 0),
  }));
  // a step is a testcase named "<its test> &gt; <step>": its time is in its test's already
  const names = new Set(cases.map((c) => `${c.file}\n${c.name}`));
  const isStep = (c: { file: string; name: string }) => {
    for (let i = c.name.indexOf(" &gt; "); i > 0; i = c.name.indexOf(" &gt; ", i + 1)) {
      if (names.has(`${c.file}\n${c.name.slice(0, i)}`)) return true;
    }
    return false;
  };
  const byFile = new Map<string, FileTime>();
  for (const c of cases) {
    if (isStep(c)) continue;
    const row = byFile.get(c.file) ?? { file: c.file, tests: 0, seconds: 0 };
    row.tests++;
    row.seconds += c.seconds;
    byFile.set(c.file, row);
  }
  return [...byFile.values()].sort((a, b) => b.seconds - a.seconds);
}

if (import.meta.main) {
  if (Deno.args.length === 0) {
    console.error("usage: deno run -A scripts/test_profile.ts JUNIT.xml...");
    Deno.exit(2);
  }
  const texts = await Promise.all(Deno.args.map((p) => Deno.readTextFile(p)));
  const rows = fileTimes(texts.join("\n"));
  const total = rows.reduce((s, r) => s + r.seconds, 0);
  const walls = texts.map((x) => /<testsuites\b[^>]*\btime="([^"]*)"/.exec(x)?.[1])
    .map((w) => w ? `${Number(w).toFixed(0)} s` : "?");
  console.log(
    `${rows.length} files, ${rows.reduce((s, r) => s + r.tests, 0)} tests, ` +
      `${total.toFixed(0)} s of tests; each run: ${walls.join(", ")}`,
  );
  for (const r of rows.slice(0, Number(Deno.env.get("PROFILE_ROWS") || 25))) {
    console.log(
      `${r.seconds.toFixed(1).padStart(7)} s ${
        (100 * r.seconds / total).toFixed(1).padStart(5)
      }%  ` +
        `${String(r.tests).padStart(3)}  ${r.file}`,
    );
  }
}
