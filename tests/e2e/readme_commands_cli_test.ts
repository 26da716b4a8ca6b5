/**
 * The commands of the `sh` blocks of {@linkcode PARTS}' part "cli" run here, as
 * `readme_commands.ts` says; `readme_commands_test.ts` checks that the parts cover every file.
 */

import { PARTS, runPart } from "./readme_commands.ts";

Deno.test(`the documented commands of ${PARTS.find((p) => p.name === "cli")?.files.join(", ")} run`, async () => {
  await runPart("cli");
});
