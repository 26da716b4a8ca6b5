/**
 * `service` as ONE JavaScript module: `deno bundle` of `main.ts` with every
 * npm package (viem, zod) and every lazily imported command inlined. The npm
 * package (`scripts/pack.ts`) ships this file, and the release binary
 * (`scripts/compile.ts`) embeds this same file, so the package test
 * (`tests/package/`) runs what the binaries contain.
 *
 * `deno bundle` uses esbuild, which Deno fetches from the npm registry into
 * its cache on first use (no package.json entry needed).
 *
 * `deno run -A scripts/bundle.ts [--output FILE]` (default `dist/bundle/service.js`).
 *
 * @module
 */

import { parseArgs } from "node:util";

/** The checkout's root directory, ending in `/`. */
export const ROOT: string = new URL("../", import.meta.url).pathname;

/** Where {@linkcode bundle} writes by default. */
export const BUNDLE_PATH: string = `${ROOT}dist/bundle/service.js`;

/**
 * What `service` may do, for the binary (`deno compile`) and the npm
 * package's launcher alike: network (platform, node, local servers), files
 * (keys, state, sockets), env, children, system info, FFI (OpenSSL signing).
 */
export const PERMISSIONS: readonly string[] = [
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-run",
  "--allow-sys",
  "--allow-ffi",
  "--no-prompt",
];

/** Bundles `main.ts` into `output`; throws with deno's last lines when it fails. */
export async function bundle(output: string = BUNDLE_PATH): Promise<string> {
  await Deno.mkdir(output.replace(/\/[^/]*$/, ""), { recursive: true });
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--quiet", "--platform", "deno", "--output", output, `${ROOT}main.ts`],
    cwd: ROOT,
    env: { DENO_TLS_CA_STORE: "system", NO_COLOR: "1" },
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    const text = new TextDecoder().decode(stderr).trim().split("\n").slice(-5).join("\n");
    throw new Error(`deno bundle failed: ${text}`);
  }
  return output;
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { output: { type: "string" } } });
  try {
    console.error(`bundle: wrote ${await bundle(values.output ?? BUNDLE_PATH)}`);
  } catch (e) {
    console.error(`bundle: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
