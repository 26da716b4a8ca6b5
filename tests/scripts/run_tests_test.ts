/**
 * The closing lines of `deno task test`: skipped tests are counted and named,
 * and under `SERVICE_REQUIRE_ALL=1` they count as failures.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  ALONE,
  ALONE_JOBS,
  CHECK_FAILED,
  closingLines,
  combineSummaries,
  defaultJobs,
  documentedModules,
  LONG_FIRST,
  longFirst,
  SLOW_TESTS,
  SummaryReader,
  TEST_ARGS,
  testFiles,
  testPlan,
} from "../../scripts/run_tests.ts";
import { fileTimes } from "../../scripts/test_profile.ts";
import { ROOT } from "../support/tools.ts";

const OUTPUT = `running 2 tests from ./tests/e2e/rpc_browser_test.ts
a web page cannot make the bridge send ... ignored (0ms)
other ... ok (3ms)
running 1 test from ./tests/webhooks/plot_test.ts
steps ...
  a step ... ignored (0ms)
steps ... ok (1ms)
every plot passes xmllint ... ignored (0ms)

ok | 2 passed | 0 failed | 2 ignored (1 step) (6ms)
`;

function read(text: string) {
  const r = new SummaryReader();
  for (const l of text.split("\n")) r.line(l);
  return r.summary();
}

Deno.test("skipped tests are counted and named with their files; steps are not tests", () => {
  const s = read(OUTPUT);
  assert.deepEqual(s, {
    passed: 2,
    failed: 0,
    complete: true,
    skipped: [
      "./tests/e2e/rpc_browser_test.ts: a web page cannot make the bridge send",
      "./tests/webhooks/plot_test.ts: every plot passes xmllint",
    ],
  });
  assert.deepEqual(closingLines(s, false), [
    "skipped: ./tests/e2e/rpc_browser_test.ts: a web page cannot make the bridge send",
    "skipped: ./tests/webhooks/plot_test.ts: every plot passes xmllint",
    "tests: 2 passed, 0 failed, 2 skipped",
  ]);
});

Deno.test("under SERVICE_REQUIRE_ALL=1 a skip is a failure", () => {
  const lines = closingLines(read(OUTPUT), true);
  assert.equal(lines.at(-1), "tests: 2 passed, 2 failed, 2 skipped");
  assert.match(lines.at(-2)!, /SERVICE_REQUIRE_ALL=1 forbids skipping/);
});

Deno.test("in a --parallel run's output, skipped tests are named with their files; steps are not tests", () => {
  const s = read(
    `./tests/e2e/rpc_browser_test.ts => a web page cannot make the bridge send ... ignored (0ms)
./tests/webhooks/plot_test.ts => steps ... a step ... ignored (0ms)
./tests/webhooks/plot_test.ts => steps ... ok (1ms)
./tests/webhooks/plot_test.ts => every plot passes xmllint ... ignored (0ms)

ok | 1 passed | 0 failed | 2 ignored (1 step) (6ms)
`,
  );
  assert.deepEqual(s.skipped, [
    "./tests/e2e/rpc_browser_test.ts: a web page cannot make the bridge send",
    "./tests/webhooks/plot_test.ts: every plot passes xmllint",
  ]);
});

Deno.test("a run without skips says 0 skipped; a failed run keeps its counts", () => {
  assert.deepEqual(closingLines(read("FAILED | 11 passed (3 steps) | 1 failed (2m)"), true), [
    "tests: 11 passed, 1 failed, 0 skipped",
  ]);
});

Deno.test("output without deno's summary is one failure", () => {
  assert.deepEqual(closingLines(read("error: Module not found"), false), [
    "tests: 0 passed, 1 failed, 0 skipped",
  ]);
});

Deno.test("without arguments: tests/slow/, one type check and the main group from the start; the files that run alone after the main group", async () => {
  const files = await testFiles(ROOT);
  assert.ok(files.length >= 100, `${files.length} test files`);
  assert.ok(files.includes("tests/scripts/run_tests_test.ts"));
  assert.ok(files.every((f) => /^tests\/.+_test\.ts$/.test(f)), files.join(" "));
  // every LONG_FIRST and ALONE entry names a file that exists
  for (const l of [...LONG_FIRST, ...ALONE]) assert.ok(files.includes(l), l);
  const documented = await documentedModules(ROOT);
  assert.ok(documented.includes("lib/core/mod.ts") && documented.at(-1) === "mod.ts");
  assert.ok(documented.every((f) => f === "mod.ts" || /^lib\/.+\.ts$/.test(f)));
  const plan = testPlan([], files, 5, documented);
  // one type check, of the tests and of lib/ with its examples
  assert.deepEqual(plan.check, {
    args: ["check", "--quiet", "--doc", ...documented, ...files],
    env: {},
  });
  const test = [...TEST_ARGS, "--no-check"];
  const [main, alone] = plan.sequence;
  assert.equal(plan.sequence.length, 2);
  assert.deepEqual(main.env, { DENO_JOBS: "5" });
  assert.deepEqual(main.args.slice(0, test.length + 1), [...test, "--parallel"]);
  const order = main.args.slice(test.length + 1);
  assert.deepEqual(order.slice(0, LONG_FIRST.length), [...LONG_FIRST], "the longest first");
  assert.deepEqual(alone, {
    args: [...test, "--parallel", ...ALONE],
    env: { DENO_JOBS: String(ALONE_JOBS) },
  });
  const slow = files.filter((f) => f.startsWith(SLOW_TESTS));
  assert.ok(slow.length >= 3);
  assert.deepEqual(plan.beside, [{
    args: [...test, "--parallel", ...slow],
    env: { DENO_JOBS: String(slow.length) },
  }]);
  // each file runs once, in one of the runs
  assert.deepEqual([...order, ...ALONE, ...slow].sort(), files);
  assert.deepEqual(longFirst(["b", "c/x", "a", "c/y"], ["c/", "a"]), ["c/x", "c/y", "a", "b"]);
  assert.equal(defaultJobs(2), 4);
  // with arguments, exactly what was asked, once (deno test checks what it runs)
  assert.deepEqual(testPlan(["tests/slow/x_test.ts", "--filter", "y"]), {
    sequence: [{ args: [...TEST_ARGS, "tests/slow/x_test.ts", "--filter", "y"], env: {} }],
    beside: [],
  });
});

Deno.test("the closing line counts both processes; one without deno's summary fails the whole", () => {
  const slow = read(`running 1 test from ./tests/slow/forge_resume_test.ts
forge resumes ... ok (3m)

ok | 1 passed | 0 failed (3m)
`);
  const both = combineSummaries([read(OUTPUT), slow]);
  assert.deepEqual(closingLines(both, false).at(-1), "tests: 3 passed, 0 failed, 2 skipped");
  assert.equal(
    closingLines(combineSummaries([slow, read("FAILED | 4 passed | 2 failed (9s)")]), false).at(-1),
    "tests: 5 passed, 2 failed, 0 skipped",
  );
  assert.deepEqual(closingLines(combineSummaries([slow, read("error: boom")]), false), [
    "tests: 0 passed, 1 failed, 0 skipped",
  ]);
  // a failed type check (run beside the tests) counts as one failed test
  assert.equal(
    closingLines(combineSummaries([slow, CHECK_FAILED]), false).at(-1),
    "tests: 1 passed, 1 failed, 0 skipped",
  );
});

Deno.test("deno task test prints no Check lines and no punycode deprecation warning", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}scripts/run_tests.ts`, "tests/fixtures/noise/loads_punycode.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, text);
  assert.match(text, /^tests: 1 passed, 0 failed, 0 skipped$/m);
  assert.equal(/^Check /m.test(text), false, text);
  assert.equal(/punycode|DEP0040/.test(text.replace(/loads[_ ]punycode/g, "")), false, text);
});

Deno.test("the profile sums each file's test times from deno's JUnit report (steps are in their tests), longest first", () => {
  const junit = `<testsuites name="deno test" tests="3" time="9.5">
    <testsuite name="./tests/a_test.ts" tests="2">
        <testcase name="one" classname="./tests/a_test.ts" time="1.5" line="1" col="6">
        </testcase>
        <testcase name="two" classname="./tests/a_test.ts" time="2.0" line="2" col="6">
        </testcase>
        <testcase name="two &gt; a step" classname="./tests/a_test.ts" time="1.9" line="3" col="6">
        </testcase>
    </testsuite>
    <testsuite name="./tests/b_test.ts" tests="1">
        <testcase name="x &gt; y" classname="./tests/b_test.ts" time="6.0" line="1" col="6">
        </testcase>
    </testsuite>
</testsuites>`;
  assert.deepEqual(fileTimes(junit), [
    { file: "tests/b_test.ts", tests: 1, seconds: 6 },
    { file: "tests/a_test.ts", tests: 2, seconds: 3.5 },
  ]);
});
