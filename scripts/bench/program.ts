/**
 * How a benchmark runs `service`: as the npm package runs it (the bundle of
 * `scripts/bundle.ts`, built into a temporary directory, with the package's
 * permissions, V8 flags and launch flags; `rpc` with its own V8 flags, as the
 * package's launcher starts it), or from the checkout's `main.ts`
 * (`BRIDGE_SOURCE=1`). `BRIDGE_V8_FLAGS=<flags>` replaces the V8 flags of
 * every command (comma-separated; empty: V8's defaults), to compare heap sizings;
 * `BRIDGE_V8_FLAGS_REF=<flags>` replaces them for another checkout only (the
 * gate's REF), so that two flag sets are measured paired on the same code:
 * `BRIDGE_V8_FLAGS=<new> BRIDGE_V8_FLAGS_REF=<old> deno task bench:gate HEAD`.
 *
 * By default the program is this checkout's; given another checkout's root
 * (the regression gate's REF worktree, `gate.ts`), it is that checkout's,
 * built by that checkout's own `scripts/bundle.ts` with its own flags.
 *
 * @module
 */

import * as own from "../bundle.ts";

/** Deno's arguments before the command's own (`rpc ...`), and how to clean up. */
export interface Program {
  /** e.g. `["run", "--allow-net", ..., "--v8-flags=...", "/tmp/x/service.js"]`. */
  args: string[];
  /** The same for the `rpc` command (its own V8 flags, `RPC_V8_FLAGS`). */
  rpcArgs: string[];
  /** What the output says was run. */
  description: string;
  /** The V8 flags in use (empty: V8's defaults). */
  v8Flags: string;
  /** The V8 flags of `rpc` (empty: V8's defaults). */
  rpcV8Flags: string;
  /** Removes the temporary bundle. */
  cleanup(): Promise<void>;
}

/** What a checkout's `scripts/bundle.ts` exports that a benchmark uses. */
type BundleModule =
  & Pick<typeof own, "bundle" | "PERMISSIONS" | "LAUNCH_FLAGS" | "RUNTIME_FLAGS" | "V8_FLAGS">
  & Partial<Pick<typeof own, "RPC_V8_FLAGS">>; // older checkouts have none

/**
 * Builds the program a benchmark runs (see the module doc); `root` is the
 * checkout (ending in `/`; default this one).
 */
export async function benchProgram(root?: string): Promise<Program> {
  const ownRoot = new URL("../../", import.meta.url).pathname;
  const checkout = root ?? ownRoot;
  const b: BundleModule = checkout === ownRoot
    ? own
    : await import(new URL(`file://${checkout}scripts/bundle.ts`).href);
  const given = (checkout === ownRoot ? undefined : Deno.env.get("BRIDGE_V8_FLAGS_REF")) ??
    Deno.env.get("BRIDGE_V8_FLAGS");
  const v8Flags = given ?? b.V8_FLAGS.join(",");
  const rpcV8Flags = given ?? (b.RPC_V8_FLAGS ?? b.V8_FLAGS).join(",");
  const flagsOf = (f: string) => f ? [`--v8-flags=${f}`] : [];
  if (Deno.env.get("BRIDGE_SOURCE") === "1") {
    return {
      args: ["run", "-A", ...flagsOf(v8Flags), `${checkout}main.ts`],
      rpcArgs: ["run", "-A", ...flagsOf(rpcV8Flags), `${checkout}main.ts`],
      description: `${checkout}main.ts`,
      v8Flags,
      rpcV8Flags,
      cleanup: () => Promise.resolve(),
    };
  }
  const dir = await Deno.makeTempDir({ prefix: "bench-bundle-" });
  const entry = await b.bundle(`${dir}/service.js`);
  const argsOf = (f: string) => [
    "run",
    ...b.PERMISSIONS,
    ...flagsOf(f),
    ...b.LAUNCH_FLAGS,
    ...b.RUNTIME_FLAGS,
    entry,
  ];
  return {
    args: argsOf(v8Flags),
    rpcArgs: argsOf(rpcV8Flags),
    description: checkout === ownRoot
      ? "the bundle, as the npm package runs it"
      : `the bundle of ${checkout}, as the npm package runs it`,
    v8Flags,
    rpcV8Flags,
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}
