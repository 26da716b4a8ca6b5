/**
 * `deno task compile [--target T] [--output P] [--apiBaseUrl URL] [--jwksUrl URL]`: builds the
 * self-contained `service` executable with `deno compile` and explicit permissions. The two
 * URLs (or `SERVICE_BUILD_API_BASE_URL`, `SERVICE_BUILD_JWKS_URL`) are the platform's production
 * addresses the binary carries (`scripts/bundle.ts`); without them it carries none.
 *
 * It embeds the bundle of `scripts/bundle.ts` (the entry module and its
 * chunks: the whole directory is included, so no chunk depends on
 * `deno compile` finding its dynamic import), the same files the npm package
 * ships, with the same permissions and V8 flags, so the package test
 * (`tests/package/npm_package_test.ts`) runs what the binary contains.
 *
 * `deno compile` downloads its runtime (denort) for the target; on a machine
 * without internet access that download fails, and this script says so in one
 * line instead of a stack trace. The release workflow runs it for the five
 * targets.
 *
 * @module
 */

import { parseArgs } from "node:util";
import {
  bundle,
  PERMISSIONS,
  productionAddresses,
  ROOT as root,
  RUNTIME_FLAGS,
  V8_FLAGS,
} from "./bundle.ts";
const { values } = parseArgs({
  args: Deno.args,
  options: {
    target: { type: "string" },
    output: { type: "string" },
    apiBaseUrl: { type: "string" },
    jwksUrl: { type: "string" },
  },
});

const output = values.output ??
  `${root}dist/service${values.target?.includes("windows") ? ".exe" : ""}`;
let entry: string;
try {
  entry = await bundle(undefined, productionAddresses(values));
} catch (e) {
  console.error(`compile: ${(e as Error).message}`);
  Deno.exit(1);
}
const args = [
  "compile",
  "--no-config",
  "--no-lock",
  ...PERMISSIONS,
  ...RUNTIME_FLAGS,
  ...(V8_FLAGS.length ? [`--v8-flags=${V8_FLAGS.join(",")}`] : []),
  "--output",
  output,
  // the chunks, found by URL beside the program
  "--include",
  entry.replace(/\/[^/]*$/, ""),
  ...(values.target ? ["--target", values.target] : []),
  entry,
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
        "here, `deno task pack` builds the npm package, which runs the same bundle.",
    );
  } else {
    console.error(text.trim().split("\n").slice(-5).join("\n"));
  }
  Deno.exit(1);
}
console.error(`compile: wrote ${output}`);
