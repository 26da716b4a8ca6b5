/**
 * `deno task service` preloads this module (`deno run --preload`): the npm
 * packages are checked, and installed on a fresh clone, in the same Deno
 * process that then runs `main.ts`, so no second process starts for the check.
 *
 * @module
 */

import { ensureNodeModules } from "./ensure_deps.ts";

try {
  await ensureNodeModules("service");
} catch (e) {
  console.error(`service: ${(e as Error).message}`);
  Deno.exit(1);
}
