/**
 * `deno task test`: installs what the suite needs on a fresh clone (npm
 * packages, with anvil/cast/forge and solc), runs `deno test`, and prints the
 * plain closing line `tests: N passed, N failed` that CI reads.
 *
 * Extra arguments go to `deno test` (e.g. a file or `--filter`).
 *
 * @module
 */

import { ensureNodeModules } from "./ensure_deps.ts";

const root = new URL("..", import.meta.url).pathname;

if (import.meta.main) {
  await ensureNodeModules("test");
  const env = { DENO_TLS_CA_STORE: "system", RUST_BACKTRACE: "0", NO_COLOR: "1" };
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", ...Deno.args],
    cwd: root,
    env,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let tail = "";
  const dec = new TextDecoder();
  for await (const chunk of child.stdout) {
    await Deno.stdout.write(chunk);
    tail = (tail + dec.decode(chunk, { stream: true })).slice(-4000);
  }
  const { code } = await child.status;
  // deno test ends with e.g. "ok | 12 passed (3 steps) | 0 failed (3s)" or "FAILED | 11 passed | 1 failed".
  // deno-lint-ignore no-control-regex
  const plain = tail.replace(/\x1b\[[0-9;]*m/g, "");
  const m = [
    ...plain.matchAll(/^(ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed/gm),
  ].pop();
  if (m) console.log(`tests: ${m[2]} passed, ${m[3]} failed`);
  else console.log(`tests: 0 passed, 1 failed`);
  Deno.exit(code === 0 && m ? 0 : code || 1);
}
