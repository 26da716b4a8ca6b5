/**
 * `deno task compile [--target T] [--output P]`: builds the self-contained
 * `service` executable with `deno compile` and explicit permissions.
 *
 * `deno compile` downloads its runtime (denort) for the target; on a machine
 * without internet access that download fails, and this script says so in one
 * line instead of a stack trace. The release workflow runs it for the five
 * targets.
 *
 * @module
 */

import { parseArgs } from "node:util";

const root = new URL("../", import.meta.url).pathname;
const { values } = parseArgs({
  args: Deno.args,
  options: { target: { type: "string" }, output: { type: "string" } },
});

/** What the binary may do: network (platform, node, local servers), files (keys, state, sockets), env, children. */
const PERMISSIONS = [
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-run",
  "--allow-sys",
  "--allow-ffi",
  "--no-prompt",
];

const output = values.output ??
  `${root}dist/service${values.target?.includes("windows") ? ".exe" : ""}`;
const args = [
  "compile",
  ...PERMISSIONS,
  "--include",
  `${root}deno.json`,
  "--output",
  output,
  ...(values.target ? ["--target", values.target] : []),
  `${root}main.ts`,
];
const child = new Deno.Command(Deno.execPath(), {
  args,
  cwd: root,
  stdout: "inherit",
  stderr: "piped",
}).spawn();
const { code, stderr } = await child.output();
const text = new TextDecoder().decode(stderr);
if (code !== 0) {
  if (/denort|download|dl\.deno\.land|error sending request|dns error|connect/i.test(text)) {
    console.error(
      "compile: deno compile must download its runtime (denort) for the target, and this machine cannot reach it. " +
        "Run `deno task compile` where the internet is reachable (the release workflow does); " +
        "here, `deno install -g -A -n service --root DIR --config deno.json main.ts` makes an equivalent launcher.",
    );
  } else {
    console.error(text.trim().split("\n").slice(-5).join("\n"));
  }
  Deno.exit(1);
}
console.error(`compile: wrote ${output}`);
