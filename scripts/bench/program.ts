/**
 * How a benchmark runs `service`: as the npm package runs it (the bundle of
 * `scripts/bundle.ts`, built into a temporary directory, with the package's
 * permissions, V8 flags and launch flags), or from the checkout's `main.ts`
 * (`BRIDGE_SOURCE=1`). `BRIDGE_V8_FLAGS=<flags>` replaces the V8 flags
 * (comma-separated; empty: V8's defaults), to compare heap sizings.
 *
 * @module
 */

import { bundle, LAUNCH_FLAGS, PERMISSIONS, RUNTIME_FLAGS, V8_FLAGS } from "../bundle.ts";

/** Deno's arguments before the command's own (`rpc ...`), and how to clean up. */
export interface Program {
  /** e.g. `["run", "--allow-net", ..., "--v8-flags=...", "/tmp/x/service.js"]`. */
  args: string[];
  /** What the output says was run. */
  description: string;
  /** The V8 flags in use (empty: V8's defaults). */
  v8Flags: string;
  /** Removes the temporary bundle. */
  cleanup(): Promise<void>;
}

/** Builds the program a benchmark runs (see the module doc). */
export async function benchProgram(): Promise<Program> {
  const v8Flags = Deno.env.get("BRIDGE_V8_FLAGS") ?? V8_FLAGS.join(",");
  const flags = v8Flags ? [`--v8-flags=${v8Flags}`] : [];
  if (Deno.env.get("BRIDGE_SOURCE") === "1") {
    return {
      args: ["run", "-A", ...flags, new URL("../../main.ts", import.meta.url).pathname],
      description: "main.ts",
      v8Flags,
      cleanup: () => Promise.resolve(),
    };
  }
  const dir = await Deno.makeTempDir({ prefix: "bench-bundle-" });
  const entry = await bundle(`${dir}/service.js`);
  return {
    args: ["run", ...PERMISSIONS, ...flags, ...LAUNCH_FLAGS, ...RUNTIME_FLAGS, entry],
    description: "the bundle, as the npm package runs it",
    v8Flags,
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}
