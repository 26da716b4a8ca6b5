/**
 * `deno task pack [--apiBaseUrl URL] [--jwksUrl URL]`: builds the npm package `service-cli` and
 * writes the tarball `npm publish` uploads to `dist/service-cli-<version>.tgz`. The URLs (or
 * `SERVICE_BUILD_API_BASE_URL`, `SERVICE_BUILD_JWKS_URL`) are the platform's production
 * addresses the package carries (`scripts/bundle.ts`); without them it carries none.
 *
 * The package holds the program as bundled modules in `lib/program/`
 * (`scripts/bundle.ts`: the entry `service.js`, and its chunks,
 * what `deno compile` embeds), a tiny Node launcher, and two
 * commands: `service` and `service-json-rpc` (= `service rpc`, a drop-in for
 * the platform's own bridge). The Deno runtime is not in the tarball: it is
 * an optional dependency per platform (`@deno/linux-x64-glibc`, ... at the
 * Deno version this project pins in package.json), so npm installs exactly
 * one, from the registry, at install time; nothing is fetched at first run.
 *
 * Why `service-cli`: deno.json calls the library `@service/cli`, a scope we
 * cannot own on npm, and package.json's `service` only names the checkout's
 * own (private) dependency list; `service-cli` is free and says what it is.
 *
 * @module
 */

import { parseArgs } from "node:util";
import {
  bundle,
  LAUNCH_FLAGS,
  PERMISSIONS,
  type ProductionAddresses,
  productionAddresses,
  ROOT,
  RPC_V8_FLAGS,
  RUNTIME_FLAGS,
  V8_FLAGS,
} from "./bundle.ts";
import { ensureNodeModules } from "./ensure_deps.ts";

/** The published package's name. */
export const PACKAGE_NAME = "service-cli";

/** The Deno platform packages the launcher knows (scripts/npm/launch.cjs). */
const DENO_PLATFORMS = [
  "@deno/linux-x64-glibc",
  "@deno/linux-arm64-glibc",
  "@deno/darwin-x64",
  "@deno/darwin-arm64",
  "@deno/win32-x64",
  "@deno/win32-arm64",
];

/** The version in deno.json (the release workflow checks the tag against it). */
async function version(): Promise<string> {
  return JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).version;
}

/** The Deno version the checkout runs (package.json's `@deno/linux-x64-glibc`). */
async function denoVersion(): Promise<string> {
  const pkg = JSON.parse(await Deno.readTextFile(`${ROOT}package.json`));
  return pkg.optionalDependencies["@deno/linux-x64-glibc"];
}

/** The package's package.json. */
export async function manifest(): Promise<Record<string, unknown>> {
  const deno = await denoVersion();
  return {
    name: PACKAGE_NAME,
    version: await version(),
    description:
      "service: a JSON-RPC bridge with custody signing, webhook tools, breaker simulation and a local platform emulator",
    // `service-cli` too, so that `npx -y service-cli <args>` knows what to run
    bin: {
      "service": "bin/service.cjs",
      "service-json-rpc": "bin/service-json-rpc.cjs",
      [PACKAGE_NAME]: "bin/service.cjs",
    },
    files: ["bin/", "lib/", "README.md", "docs/"],
    engines: { node: ">=18" },
    optionalDependencies: Object.fromEntries(DENO_PLATFORMS.map((p) => [p, deno])),
  };
}

function binScript(prefix: string[]): string {
  return `#!/usr/bin/env node\n"use strict";\nrequire("../lib/launch.cjs").launch(${
    JSON.stringify(prefix)
  });\n`;
}

/**
 * Builds the package in `<out>npm/` and packs it into `out` (default the checkout's `dist/`);
 * returns the tarball's path. A test packs into a directory of its own, so that it may run
 * beside `deno task pack`. `addresses`: the platform's production addresses the package carries
 * (`scripts/bundle.ts`; default none).
 */
export async function pack(
  out: string = `${ROOT}dist/`,
  addresses: ProductionAddresses = {},
): Promise<string> {
  const dir = `${out}npm/`;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(`${dir}bin`, { recursive: true });
  await Deno.mkdir(`${dir}lib`, { recursive: true });
  // A fresh clone has no node_modules yet: the bundle needs the program's packages (viem, zod).
  await ensureNodeModules("pack", "runtime");
  try {
    await bundle(`${dir}lib/program/service.js`, addresses);
  } catch (e) {
    throw new Error(
      `${(e as Error).message}\nIf a module is missing, run "npm ci" in ${ROOT} (or remove ` +
        `${ROOT}node_modules to have it installed again), then "deno task pack" again.`,
    );
  }
  const launcher = (await Deno.readTextFile(`${ROOT}scripts/npm/launch.cjs`))
    .replace("__PERMISSIONS__", JSON.stringify(PERMISSIONS))
    .replace("__V8_FLAGS__", JSON.stringify(V8_FLAGS))
    .replace("__RPC_V8_FLAGS__", JSON.stringify(RPC_V8_FLAGS))
    .replace("__LAUNCH_FLAGS__", JSON.stringify([...LAUNCH_FLAGS, ...RUNTIME_FLAGS]));
  await Deno.writeTextFile(`${dir}lib/launch.cjs`, launcher);
  await Deno.writeTextFile(`${dir}bin/service.cjs`, binScript([]), { mode: 0o755 });
  await Deno.writeTextFile(`${dir}bin/service-json-rpc.cjs`, binScript(["rpc"]), { mode: 0o755 });
  await Deno.copyFile(`${ROOT}README.md`, `${dir}README.md`);
  // the README's links to the reference (`docs/*.md`) work in the installed package too
  await Deno.mkdir(`${dir}docs`);
  for await (const e of Deno.readDir(`${ROOT}docs`)) {
    if (e.isFile && e.name.endsWith(".md")) {
      await Deno.copyFile(`${ROOT}docs/${e.name}`, `${dir}docs/${e.name}`);
    }
  }
  await Deno.writeTextFile(`${dir}package.json`, JSON.stringify(await manifest(), null, 2) + "\n");
  const { code, stdout, stderr } = await new Deno.Command("npm", {
    args: ["pack", "--json", "--pack-destination", out],
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (code !== 0) throw new Error(`npm pack failed: ${new TextDecoder().decode(stderr).trim()}`);
  const [info] = JSON.parse(new TextDecoder().decode(stdout));
  return `${out}${info.filename}`;
}

if (import.meta.main) {
  try {
    const { values } = parseArgs({
      args: Deno.args,
      options: { apiBaseUrl: { type: "string" }, jwksUrl: { type: "string" } },
    });
    console.error(`pack: wrote ${await pack(undefined, productionAddresses(values))}`);
  } catch (e) {
    console.error(`pack: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
