/**
 * The promises stay true: every test `docs/promises.md` points at
 * (`file`: "test name") exists in that file under that exact name, the file
 * points at least at the tests of each promise, and README.md's "What we
 * promise" names each of them in brief.
 */

import assert from "node:assert/strict";
import { ROOT } from "../support/tools.ts";

Deno.test("every test the promises point at exists under that name", async () => {
  const promises = await Deno.readTextFile(`${ROOT}docs/promises.md`);
  const section = promises.replace(/\s*\n\s*/g, " ");
  const refs = [...section.matchAll(/`(tests\/[\w/]+\.ts)`: ((?:"[^"]+"(?:, )?)+)/g)];
  let names = 0;
  for (const [, file, list] of refs) {
    const source = (await Deno.readTextFile(`${ROOT}${file}`)).replace(/"\s*\+\s*"/g, "");
    for (const [, name] of list.matchAll(/"([^"]+)"/g)) {
      names++;
      assert.ok(
        source.includes(JSON.stringify(name)),
        `docs/promises.md names a test that ${file} does not have: ${JSON.stringify(name)}`,
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

Deno.test("README.md's promises in brief name every promise of docs/promises.md", async () => {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const start = readme.indexOf("## What we promise");
  assert.notEqual(start, -1, "the section is there");
  const brief = readme.slice(start, readme.indexOf("\n## ", start + 1));
  assert.ok(brief.includes("docs/promises.md"), "it links to the full statement");
  const promises = await Deno.readTextFile(`${ROOT}docs/promises.md`);
  const titles = [...promises.matchAll(/^\*\*([^*]+?)[.:]?\*\*/gm)].map((m) => m[1])
    .filter((t) => t !== "The cost, stated");
  assert.ok(titles.length >= 7, titles.join(" | "));
  for (const title of titles) assert.ok(brief.includes(`**${title}`), title);
});
