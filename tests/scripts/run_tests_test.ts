/**
 * The closing lines of `deno task test`: skipped tests are counted and named,
 * and under `SERVICE_REQUIRE_ALL=1` they count as failures.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  closingLines,
  combineSummaries,
  SLOW_TESTS,
  SummaryReader,
  TEST_ARGS,
  testRuns,
} from "../../scripts/run_tests.ts";
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

Deno.test("without arguments the slow folder runs as its own parallel process beside the rest", () => {
  const [rest, slow] = testRuns([]);
  assert.deepEqual(rest.args, [...TEST_ARGS, `--ignore=${SLOW_TESTS}`]);
  assert.deepEqual(slow.args, [...TEST_ARGS, "--parallel", SLOW_TESTS]);
  // with arguments, exactly what was asked, once
  assert.deepEqual(testRuns(["tests/slow/x_test.ts", "--filter", "y"]), [
    { args: [...TEST_ARGS, "tests/slow/x_test.ts", "--filter", "y"], env: {} },
  ]);
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
