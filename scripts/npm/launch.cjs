/**
 * The npm package's launcher (Node.js, no dependencies): finds the Deno
 * runtime that npm installed from the registry as this package's optional
 * dependency for this platform (`@deno/<platform>`), and runs the bundled
 * program (`program/service.js`, beside this file, with its chunks) with it: the same permissions
 * and V8 flags as the release binary (but `rpc`'s own V8 flags for `rpc`: RPC_V8_FLAGS in
 * scripts/bundle.ts), arguments as given, standard streams inherited, the
 * child's exit code returned, and SIGINT/SIGTERM/SIGHUP passed on. Nothing is
 * fetched at run time. Copied into the package by `scripts/pack.ts`.
 */
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

/** The Deno platform packages, by `process.platform process.arch [libc]`. */
const PLATFORMS = {
  "linux x64 glibc": "@deno/linux-x64-glibc",
  "linux arm64 glibc": "@deno/linux-arm64-glibc",
  "darwin x64": "@deno/darwin-x64",
  "darwin arm64": "@deno/darwin-arm64",
  "win32 x64": "@deno/win32-x64",
  "win32 arm64": "@deno/win32-arm64",
};

/** Same list as PERMISSIONS in scripts/bundle.ts (pack.ts fills it in). */
const PERMISSIONS = __PERMISSIONS__;

/** Same list as V8_FLAGS in scripts/bundle.ts (pack.ts fills it in). */
const V8_FLAGS = __V8_FLAGS__;

/** Same list as RPC_V8_FLAGS in scripts/bundle.ts: the V8 flags of `rpc` (pack.ts fills it in). */
const RPC_V8_FLAGS = __RPC_V8_FLAGS__;

/** LAUNCH_FLAGS and RUNTIME_FLAGS of scripts/bundle.ts (pack.ts fills them in). */
const LAUNCH_FLAGS = __LAUNCH_FLAGS__;

const SIGNALS = process.platform === "win32" ? [] : ["SIGINT", "SIGTERM", "SIGHUP"];

function fail(message) {
  process.stderr.write(`service: ${message}\n`);
  process.exit(1);
}

function denoBinary() {
  let libc = "";
  if (process.platform === "linux") {
    const header = process.report && process.report.getReport().header;
    libc = header && header.glibcVersionRuntime ? "glibc" : "musl";
  }
  const key = [process.platform, process.arch, libc].filter(Boolean).join(" ");
  const pkg = PLATFORMS[key];
  if (!pkg) {
    fail(`no Deno runtime is published on npm for ${key}; use a release binary instead.`);
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    fail(
      `the Deno runtime package ${pkg} is not installed (npm skipped an optional dependency?); ` +
        "reinstall without --omit=optional / --no-optional.",
    );
  }
  return path.join(dir, process.platform === "win32" ? "deno.exe" : "deno");
}

/** Runs the program with `prefix` (e.g. `["rpc"]`) before the user's arguments. */
function launch(prefix) {
  const program = path.join(__dirname, "program", "service.js");
  const argv = [...prefix, ...process.argv.slice(2)];
  // the command is the first argument
  const flags = argv[0] === "rpc" ? RPC_V8_FLAGS : V8_FLAGS;
  const v8 = flags.length ? [`--v8-flags=${flags.join(",")}`] : [];
  const args = ["run", ...PERMISSIONS, ...v8, ...LAUNCH_FLAGS, program];
  const child = spawn(denoBinary(), [...args, ...argv], {
    stdio: "inherit",
    env: { DENO_NO_UPDATE_CHECK: "1", ...process.env },
  });
  // A terminal's Ctrl-C reaches this process and Deno alike (one process group), so Deno gets
  // SIGINT twice: once from the terminal, once from here. That is harmless: once a command is
  // stopping, the program absorbs further stop signals (lib/cli/stop_signals.ts) and ends as the
  // command says (exit 0). Forwarding is still needed for a signal sent to this process alone
  // (`kill -INT <pid>`, a supervisor).
  const forward = {};
  for (const sig of SIGNALS) {
    forward[sig] = () => {
      try {
        child.kill(sig);
      } catch { /* already gone */ }
    };
    process.on(sig, forward[sig]);
  }
  child.on("error", (e) => fail(`cannot start the Deno runtime: ${e.message}`));
  child.on("exit", (code, signal) => {
    for (const sig of SIGNALS) process.removeListener(sig, forward[sig]);
    if (signal) {
      // End as the child did, so the caller sees the same signal.
      process.kill(process.pid, signal);
      process.exitCode = 128 + (require("node:os").constants.signals[signal] || 0);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

module.exports = { launch };
