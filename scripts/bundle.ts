/**
 * `service` as bundled JavaScript: `deno bundle --code-splitting` of
 * `main.ts` with every npm package (viem, zod) inlined, into one directory: the
 * entry module (`service.js`) and, beside it, one chunk per lazily imported
 * part (each command, each transport, the code they share). Split, not one module: with one module every command's code is
 * parsed at every start (medians of 11 paired runs: `--version` 68 ms and
 * 49 MB against 30 ms and 35 MB split; `rpc --http -- true` 81 ms and 56 MB
 * against 49 ms and 45 MB). The npm package
 * (`scripts/pack.ts`) ships this directory, and the release binary
 * (`scripts/compile.ts`) embeds the same one, so the package test
 * (`tests/package/`) runs what the binaries contain.
 *
 * `deno bundle` uses esbuild, which Deno fetches from the npm registry into
 * its cache on first use (no package.json entry needed).
 *
 * `deno run -A scripts/bundle.ts [--output FILE] [--apiBaseUrl URL] [--jwksUrl URL]` (default
 * `dist/bundle/service.js`; the directory of FILE is emptied first: it holds the bundle only).
 * The two URLs are the platform's production addresses the build carries
 * ({@linkcode productionAddresses}; also `SERVICE_BUILD_API_BASE_URL`, `SERVICE_BUILD_JWKS_URL`):
 * without them the build has none, and every command needs an address from the user.
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
 * package's launcher alike: exactly what its commands need, no more (the
 * README lists them with their reasons).
 *
 * - `--allow-net`: the platform's API (any host: `--apiBaseUrl`), the node
 *   (`--rpcUrl`), and the servers `rpc`, `emulator` and `webhooks listen` open;
 * - `--allow-read`, `--allow-write`: key files, `.env`, profiles, delivery logs,
 *   `--state`, the IPC socket, the emulator's key directory: paths the user
 *   names, so not scoped;
 * - `--allow-env`: `SERVICE_*`, `HOME`/`XDG_CONFIG_HOME`, `NO_COLOR`/`COLUMNS`,
 *   and `rpc` hands its child the whole environment (less the secrets);
 * - `--allow-run`: `rpc` runs the user's command after `--` (any program);
 * - `--allow-sys=uid` only: the emulator removes stale key directories that
 *   belong to this user (`Deno.uid()`, `lib/core/owned_temp_dir.ts`);
 * - no `--allow-ffi` (signing is WebCrypto's), no `--allow-import`, no prompt.
 */
export const PERMISSIONS: readonly string[] = [
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-run",
  "--allow-sys=uid",
  "--no-prompt",
];

/**
 * Deno's flags of the npm launcher besides the permissions and V8 flags: no
 * config or lock file of the user's directory, no download messages, and
 * `--unstable-lazy-dynamic-imports`: without it `deno run` reads and analyzes
 * every chunk a dynamic import names before the program starts (all of them,
 * ~1.6 MB), with it only what a command imports. Measured on the package form
 * (11 paired runs): `--version` 36 -> 25 ms and 35.4 -> 33.5 MB; the same
 * gain as making the imports unanalyzable. The Deno version is pinned
 * (package.json), so the unstable flag cannot change under us; a compiled
 * binary loads its embedded modules lazily anyway.
 */
export const LAUNCH_FLAGS: readonly string[] = [
  "--no-config",
  "--no-lock",
  "--quiet",
  "--unstable-lazy-dynamic-imports",
];

/**
 * Deno features the program's behaviour needs, for the npm launcher and
 * `deno compile` alike (a checkout gets them from `deno.json`'s `unstable`):
 * `--unstable-no-legacy-abort`, so that an HTTP request's `signal` aborts
 * only when its client goes away, not also after every answer (the bridge
 * reads it to tell that a client gave up on a send; with the legacy behaviour
 * Deno also prints a warning on standard error). Deno's announced default.
 */
export const RUNTIME_FLAGS: readonly string[] = ["--unstable-no-legacy-abort"];

/**
 * V8 flags of the program, for the binary (`deno compile --v8-flags`) and
 * the npm package's launcher alike: young-generation semi-spaces of at most
 * 2 MB instead of V8's 16 MB. The long-running commands (`rpc`, `emulator`)
 * keep a small live heap; connections opened in a burst survive a scavenge,
 * which makes V8 grow the young generation to its maximum and keep it.
 * Measured with 1,000 WebSocket subscribers of `newHeads` on `rpc`
 * (`scripts/bench/ws_fanout.ts`, issue 12's bound of 100 MB): ~101-103 MB
 * with V8's default, ~92-95 MB with this. No cost above the noise of these
 * machines on `breaker simulate` (CPU 0.48 s against 0.46-0.55 s for 1M
 * lines), HTTP pass-through or the emulator's webhook deliveries (CPU per
 * delivery: median 495 µs of five runs against 513 µs); 1 MB did cost the emulator
 * (2 runs: 598-725 µs against 490-533 µs).
 *
 * `--heap-growing-percent=20` was tried beside it (issue 31): the fan-out over
 * 10 s peaked at 93.6-96.0 MB instead of 105.6-117.4, but the emulator's
 * webhook deliveries were 5-18% slower in three `bench:gate` runs (9% with the
 * flag alone changed), and set at run time by the bridge alone (`node:v8`) it
 * did not lower the peak. So only `rpc` gets it, from the package's launcher:
 * {@linkcode RPC_V8_FLAGS}.
 */
export const V8_FLAGS: readonly string[] = ["--max-semi-space-size=2"];

/**
 * V8 flags of `rpc` (the bridge) in place of {@linkcode V8_FLAGS}, where the
 * program is started per command: the npm package's launcher picks them
 * when the command is `rpc` (also as `service-json-rpc`). The release binary
 * carries one set of flags for every command (`deno compile --v8-flags`), so
 * its bridge runs with {@linkcode V8_FLAGS}.
 *
 * Why (issue 31): fanning a block out to 1,000 WebSocket subscribers starts
 * 1,000 socket writes at once; their promises (Deno's and ours) are alive at
 * the young-generation collections of the burst, and 0.2-0.45 MB per poll of
 * the node is promoted (V8's `--trace-gc-nvp`): the old generation grows by
 * ~2 MB/s of garbage while the live heap stays ~15 MB (measured with forced
 * collections), and V8's first limit after start-up is ~63 MB, so nothing
 * collects it within a 10 s run. `--heap-growing-percent=20` at start-up
 * lowers that limit; set at run time it did not do the same (one run: 102
 * MB). `--max-semi-space-size=1` beside it peaked lower (91-93 MB) but cost
 * the bridge's HTTP pass-through 16% (`bench:gate --only fanout,http` with
 * `BRIDGE_V8_FLAGS`, all 6 pairs worse). Measured on the fan-out
 * (`scripts/bench/ws_fanout.ts 1000 10`, bridge peak RSS): see docs/rpc.md's
 * "Memory". The emulator keeps {@linkcode V8_FLAGS}.
 */
export const RPC_V8_FLAGS: readonly string[] = [
  "--max-semi-space-size=2",
  "--heap-growing-percent=20",
];

/**
/**
 * The platform's production addresses a build carries (`lib/platform/production.ts`): the
 * release workflow's setting, empty by default. A build without them never assumes an address.
 */
export interface ProductionAddresses {
  /** The production API's base URL (`--apiBaseUrl` of compile/pack, `SERVICE_BUILD_API_BASE_URL`). */
  apiBaseUrl?: string;
  /** The production JWKS URL (`--jwksUrl` of compile/pack, `SERVICE_BUILD_JWKS_URL`). */
  jwksUrl?: string;
}

/** The markers of `lib/platform/production.ts` the bundle's addresses replace. */
const ADDRESS_MARKERS = {
  apiBaseUrl: "__SERVICE_BUILD_API_BASE_URL__",
  jwksUrl: "__SERVICE_BUILD_JWKS_URL__",
} as const;

/**
 * The production addresses of a build from its flags, else the variables `SERVICE_BUILD_*`
 * (the release workflow sets them from its repository variables); each must be an http(s) URL
 * without credentials. Empty or absent: none.
 */
export function productionAddresses(
  flags: ProductionAddresses,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): ProductionAddresses {
  const pick = (flag: string | undefined, variable: string, what: string) => {
    const v = (flag ?? env(variable) ?? "").trim();
    if (v === "") return undefined;
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      throw new Error(`${what} ${JSON.stringify(v)} is not a URL`);
    }
    if ((u.protocol !== "https:" && u.protocol !== "http:") || u.username || u.password) {
      throw new Error(`${what} ${JSON.stringify(v)}: expected an http(s) URL without credentials`);
    }
    return v;
  };
  return {
    apiBaseUrl: pick(flags.apiBaseUrl, "SERVICE_BUILD_API_BASE_URL", "--apiBaseUrl"),
    jwksUrl: pick(flags.jwksUrl, "SERVICE_BUILD_JWKS_URL", "--jwksUrl"),
  };
}

/**
 * Writes the build's production addresses into the bundle in `dir` in place of the markers
 * of `lib/platform/production.ts` (an address not given: `""`, none). Each marker must be
 * found exactly once, so a renamed or inlined marker fails the build instead of shipping a
 * build that silently has no address.
 */
async function embedAddresses(dir: string, addresses: ProductionAddresses): Promise<void> {
  const found = { apiBaseUrl: 0, jwksUrl: 0 };
  for await (const e of Deno.readDir(dir)) {
    if (!e.name.endsWith(".js")) continue;
    const path = `${dir}/${e.name}`;
    let text = await Deno.readTextFile(path);
    let changed = false;
    for (const key of ["apiBaseUrl", "jwksUrl"] as const) {
      const marker = JSON.stringify(ADDRESS_MARKERS[key]);
      const parts = text.split(marker);
      if (parts.length === 1) continue;
      found[key] += parts.length - 1;
      text = parts.join(JSON.stringify(addresses[key] ?? ""));
      changed = true;
    }
    if (changed) await Deno.writeTextFile(path, text);
  }
  for (const key of ["apiBaseUrl", "jwksUrl"] as const) {
    if (found[key] !== 1) {
      throw new Error(
        `the bundle holds the marker ${ADDRESS_MARKERS[key]} ${found[key]} times (expected once)`,
      );
    }
  }
}

/**
 * Bundles `main.ts` into `output` (the entry module) with its chunks beside
 * it; the directory of `output` is emptied first; the production addresses given are written in
 * (none: the build has none). Throws with deno's last lines when it fails.
 */
export async function bundle(
  output: string = BUNDLE_PATH,
  addresses: ProductionAddresses = {},
): Promise<string> {
  const dir = output.replace(/\/[^/]*$/, "");
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  await runBundle(["--code-splitting", "--outdir", dir, `${ROOT}main.ts`]);
  // esbuild names the entry after its source; chunks never import the entry (shared code goes
  // to chunk-*.js), which is checked here so that renaming it cannot break an import
  for await (const e of Deno.readDir(dir)) {
    if (e.name.endsWith(".js") && e.name !== "main.js") {
      const text = await Deno.readTextFile(`${dir}/${e.name}`);
      if (/["']\.\/main\.js["']/.test(text)) {
        throw new Error(`deno bundle: chunk ${e.name} imports the entry module`);
      }
    }
  }
  await Deno.rename(`${dir}/main.js`, output);
  await embedAddresses(dir, addresses);
  return output;
}

async function runBundle(args: string[]): Promise<void> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--quiet", "--platform", "deno", ...args],
    cwd: ROOT,
    env: { DENO_TLS_CA_STORE: "system", NO_COLOR: "1" },
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    const text = new TextDecoder().decode(stderr).trim().split("\n").slice(-5).join("\n");
    throw new Error(`deno bundle failed: ${text}`);
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      output: { type: "string" },
      apiBaseUrl: { type: "string" },
      jwksUrl: { type: "string" },
    },
  });
  try {
    const addresses = productionAddresses(values);
    console.error(`bundle: wrote ${await bundle(values.output ?? BUNDLE_PATH, addresses)}`);
  } catch (e) {
    console.error(`bundle: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
