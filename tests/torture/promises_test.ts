/**
 * The README's "What we promise" section stays true: every test it points at
 * (`file`: "test name") exists in that file under that exact name, and the
 * section points at least at the tests of each promise.
 */

import assert from "node:assert/strict";
import { ROOT } from "../support/tools.ts";

Deno.test("every test the README's promises point at exists under that name", async () => {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const start = readme.indexOf("## What we promise");
  assert.notEqual(start, -1, "the section is there");
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end).replace(/\s*\n\s*/g, " ");
  const refs = [...section.matchAll(/`(tests\/[\w/]+\.ts)`: ((?:"[^"]+"(?:, )?)+)/g)];
  let names = 0;
  for (const [, file, list] of refs) {
    const source = (await Deno.readTextFile(`${ROOT}${file}`)).replace(/"\s*\+\s*"/g, "");
    for (const [, name] of list.matchAll(/"([^"]+)"/g)) {
      names++;
      assert.ok(
        source.includes(JSON.stringify(name)),
        `README names a test that ${file} does not have: ${JSON.stringify(name)}`,
      );
    }
  }
  assert.ok(names >= 15, `${names} test names found`);
  for (
    const promise of [
      "Transactions are exactly-once",
      "Webhook delivery is at-least-once",
      "What survives SIGKILL",
      "What is kept private",
    ]
  ) {
    assert.ok(section.includes(promise), promise);
  }
});
