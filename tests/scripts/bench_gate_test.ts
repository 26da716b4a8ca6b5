/**
 * The regression gate's pure parts (`scripts/bench/gate_verdict.ts`,
 * `gate_ref.ts`, wrk's output in `wrk.ts`): ratios oriented so that above 1
 * is worse, the median of per-pair ratios against the 10% threshold, the
 * table, and which REF is chosen, on a real git repository. No timing here:
 * the figures are made up.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  costRatio,
  formatTable,
  judge,
  median,
  passes,
  THRESHOLD,
} from "../../scripts/bench/gate_verdict.ts";
import { chooseRef, commitOf, gitFacts } from "../../scripts/bench/gate_ref.ts";
import { parseWrk } from "../../scripts/bench/wrk.ts";

Deno.test("a cost ratio above 1 is worse, whichever way the figure goes", () => {
  assert.equal(costRatio({ ref: 100, now: 120 }, "lower"), 1.2); // 20% slower
  assert.equal(costRatio({ ref: 120, now: 100 }, "higher"), 1.2); // 1/1.2 of the req/s
  assert.equal(costRatio({ ref: 100, now: 80 }, "lower"), 0.8);
  assert.ok(Number.isNaN(costRatio({ ref: 0, now: 1 }, "lower")));
  assert.ok(Number.isNaN(costRatio({ ref: 1, now: NaN }, "higher")));
  assert.ok(Number.isNaN(costRatio({ ref: -1, now: 1 }, "lower")));
});

Deno.test("the median of an odd and an even count", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.ok(Number.isNaN(median([])));
});

Deno.test("a figure is judged on the median of its per-pair ratios", () => {
  // one pair far off (a load spike) does not decide: the median does
  const j = judge([
    { ref: 100, now: 101 },
    { ref: 100, now: 190 },
    { ref: 100, now: 99 },
  ], "lower");
  assert.equal(j.verdict, "ok");
  assert.equal(j.ratio, 1.01);
  assert.deepEqual(j.ratios, [1.01, 1.9, 0.99]);
  assert.equal(j.ref, 100);
  assert.equal(j.now, 101);
});

Deno.test("more than 10% worse fails; exactly 10% does not; 10% better is better", () => {
  assert.equal(THRESHOLD, 1.1);
  const pairs = (now: number) => [{ ref: 1000, now }];
  assert.equal(judge(pairs(1100), "lower").verdict, "ok");
  assert.equal(judge(pairs(1101), "lower").verdict, "WORSE");
  assert.equal(judge([{ ref: 1000, now: 900 }], "higher").verdict, "WORSE"); // 1000/900 = 1.11
  assert.equal(judge([{ ref: 1000, now: 910 }], "higher").verdict, "ok"); // 1.099
  assert.equal(judge(pairs(900), "lower").verdict, "better");
});

Deno.test("a figure that could not be measured fails, never passes", () => {
  assert.equal(judge([], "lower").verdict, "FAILED");
  assert.equal(judge([{ ref: 1, now: 1 }, { ref: NaN, now: 1 }], "lower").verdict, "FAILED");
  assert.equal(passes(["ok", "better"]), true);
  assert.equal(passes(["ok", "WORSE"]), false);
  assert.equal(passes(["ok", "FAILED"]), false);
});

Deno.test("the table has one line per figure with REF, now, ratio, spread and verdict", () => {
  const text = formatTable([
    {
      figure: "HTTP pass-through",
      unit: "req/s",
      judged: judge([{ ref: 20000, now: 15000 }, { ref: 21000, now: 16000 }], "higher"),
    },
    { figure: "start-up", unit: "ms", judged: judge([{ ref: 50, now: 49 }], "lower") },
    { figure: "broken", unit: "s", judged: judge([], "lower") },
  ]);
  const lines = text.split("\n");
  assert.match(lines[0], /^figure\s+REF\s+now\s+ratio\s+pairs \(min-max\)\s+verdict$/);
  assert.match(
    lines[2],
    /^HTTP pass-through \(req\/s\)\s+20500\s+15500\s+1\.323\s+2: 1\.31-1\.33\s+WORSE$/,
  );
  assert.match(lines[3], /^start-up \(ms\)\s+50\.0\s+49\.0\s+0\.980\s+1: 0\.98-0\.98\s+ok$/);
  assert.match(lines[4], /^broken \(s\)\s+-\s+-\s+-\s+0: -\s+FAILED$/);
  assert.match(lines[5], /> 1\.10 is WORSE/);
});

Deno.test("REF: a named one wins, else the merge base with main, else HEAD~1", () => {
  const facts = { head: "h", mergeBase: "m", parent: "p" };
  assert.deepEqual(chooseRef("v1.0", facts).ref, "v1.0");
  assert.equal(chooseRef(undefined, facts).ref, "m");
  assert.equal(chooseRef(undefined, { ...facts, mergeBase: "h" }).ref, "p"); // on main
  assert.equal(chooseRef(undefined, { head: "h", parent: "p" }).ref, "p"); // no main
  assert.throws(() => chooseRef(undefined, { head: "h", mergeBase: "h" }), /name a REF/);
});

Deno.test("REF on a real repository: a branch's fork point, then HEAD~1 on main", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gate-ref-" });
  const git = async (...args: string[]) => {
    const out = await new Deno.Command("git", {
      args: ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    return new TextDecoder().decode(out.stdout).trim();
  };
  try {
    await git("init", "--quiet", "--initial-branch=main");
    const commit = async (name: string) => {
      await Deno.writeTextFile(`${dir}/${name}`, name);
      await git("add", name);
      await git("commit", "--quiet", "-m", name);
      return await git("rev-parse", "HEAD");
    };
    const first = await commit("a");
    const forkPoint = await commit("b");
    await git("checkout", "--quiet", "-b", "work");
    await commit("c");
    await commit("d");
    await git("checkout", "--quiet", "main");
    await commit("e"); // main moves on: not what the branch's work replaces
    await git("checkout", "--quiet", "work");
    assert.equal(chooseRef(undefined, await gitFacts(dir)).ref, forkPoint);
    await git("checkout", "--quiet", "main");
    assert.equal(
      chooseRef(undefined, await gitFacts(dir)).ref,
      await git("rev-parse", "HEAD~1"),
    );
    assert.equal(await commitOf(dir, "HEAD~2"), first);
    await assert.rejects(commitOf(dir, "no-such-ref"), /is not a commit here/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("wrk's output: requests/s and the median latency in ms", () => {
  const out = `Running 2s test @ http://127.0.0.1:41234
  2 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   820.11us  301.21us   9.12ms   90.00%
  Latency Distribution
     50%  754.00us
     75%    0.91ms
     90%    1.10ms
     99%    2.31ms
  38211 requests in 2.00s, 4.01MB read
Requests/sec:  19105.50
Transfer/sec:      2.00MB
`;
  assert.deepEqual(parseWrk(out), { rps: 19105.5, p50: 0.754 });
  assert.equal(parseWrk(out.replace("754.00us", "1.25ms")).p50, 1.25);
  assert.ok(Number.isNaN(parseWrk("unable to connect").rps));
});
