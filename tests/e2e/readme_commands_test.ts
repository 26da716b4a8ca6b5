/**
 * Every command of the `sh` blocks of README.md and of every `docs/*.md`
 * runs here, or is listed with the reason (`readme_commands.ts` says how):
 * this file checks that the documentation's files are split into parts that
 * together run every line once, and runs the first part; the other parts run
 * in `readme_commands_<part>_test.ts`, side by side with this one.
 */

import assert from "node:assert/strict";
import { DOCS, shBlocks } from "./readme_blocks.ts";
import { documentedCommands, NOT_HERE, notHere, PARTS, runPart } from "./readme_commands.ts";

Deno.test("every command in the sh blocks of README.md and docs/ runs here, or is listed with the reason", async () => {
  assert.ok(DOCS.length >= 6, `README.md and docs/: ${DOCS.map((d) => d.path).join(" ")}`);
  const blocks = shBlocks().filter((b) => !b.walkthrough);
  for (const d of DOCS) {
    if (/\n```sh\n/.test(d.text) && !d.text.includes("<!-- walkthrough")) {
      assert.ok(blocks.some((b) => b.file === d.path), `${d.path}'s sh blocks are read`);
    }
  }
  const commands = documentedCommands();
  for (const n of NOT_HERE) {
    assert.ok(
      commands.some((c) => n.pattern.test(c.text)),
      `NOT_HERE entry matches no line: ${n.pattern}`,
    );
  }
  const toRun = commands.filter((c) => !notHere(c.text));
  assert.ok(toRun.length >= 30, `only ${toRun.length} documented commands to run`);
  // each file with a line to run is in exactly one part, and each part runs in a test file
  for (const file of new Set(toRun.map((c) => c.file))) {
    const parts = PARTS.filter((p) => p.files.includes(file)).map((p) => p.name);
    assert.equal(parts.length, 1, `${file} is in the parts [${parts.join(", ")}]: one, please`);
  }
  for (const [i, part] of PARTS.entries()) {
    for (const f of part.files) assert.ok(DOCS.some((d) => d.path === f), `${part.name}: ${f}`);
    const test = i === 0
      ? new URL(import.meta.url).pathname
      : new URL(`./readme_commands_${part.name}_test.ts`, import.meta.url).pathname;
    const text = await Deno.readTextFile(test);
    assert.ok(text.includes(`runPart("${part.name}")`), `${test} runs part ${part.name}`);
  }
});

Deno.test(`the documented commands of ${PARTS[0].files.join(", ")} run`, async () => {
  await runPart("readme");
});
