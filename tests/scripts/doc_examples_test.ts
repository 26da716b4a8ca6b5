/**
 * The documentation is checked like code: each `mod.ts` passes `deno doc
 * --lint` on its own (every exported symbol documented, no public type naming
 * a type its barrel does not export). That every `@example` in `lib/` and
 * `mod.ts` type-checks is the suite's one type check (`deno check --doc` over
 * the test files and `lib/` together, `scripts/run_tests.ts`: `lib/` is
 * checked once, not once more here); an example using a `state` it does
 * not declare fails it with `TS2304 ... Cannot find name 'state'` and the
 * snippet's file and lines.
 *
 * @module
 */

import assert from "node:assert/strict";
import { cleanEnv, ROOT } from "../support/main_command.ts";

/** Every `.ts` file under `dir` (relative to the checkout), sorted. */
async function tsFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const e of Deno.readDir(`${ROOT}${dir}`)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) found.push(...await tsFiles(path));
    else if (e.isFile && e.name.endsWith(".ts")) found.push(path);
  }
  return found.sort();
}

/** Runs the Deno running the tests with `args` in the checkout, in a clean environment. */
async function deno(args: string[]): Promise<{ code: number; output: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    clearEnv: true,
    env: cleanEnv(),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(300_000),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, output: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

Deno.test("each mod.ts passes deno doc --lint on its own", async () => {
  const barrels = ["mod.ts", ...(await tsFiles("lib")).filter((f) => f.endsWith("/mod.ts"))];
  assert.ok(barrels.length > 5, `only ${barrels.length} mod.ts files found`);
  const failures: string[] = [];
  for (const barrel of barrels) {
    const { code, output } = await deno(["doc", "--lint", barrel]);
    if (code !== 0) failures.push(`deno doc --lint ${barrel} (exit code ${code}):\n${output}`);
  }
  assert.ok(failures.length === 0, failures.join("\n"));
});
