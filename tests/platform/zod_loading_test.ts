/**
 * zod is loaded where the platform's answers are checked, never on the
 * `--help`/`--version` path or with the bridge's serving modules: the static
 * import graph (Deno's own, `deno info --json`) of those paths holds no zod
 * module, while the modules that check answers import it. (The bridge loads
 * the custody signer, and zod with it, at its first call to the signer: a
 * send, or the banner's account list after the address line.)
 *
 * @module
 */

import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

interface Dependency {
  code?: { specifier: string };
  isDynamic?: boolean;
}
interface GraphModule {
  specifier: string;
  dependencies?: Dependency[];
}

const { stdout, code } = await new Deno.Command(Deno.execPath(), {
  args: ["info", "--json", "main.ts"],
  cwd: ROOT,
  stdout: "piped",
  stderr: "inherit",
}).output();
if (code !== 0) throw new Error(`deno info exited ${code}`);
const graph = new Map<string, GraphModule>();
for (const m of (JSON.parse(new TextDecoder().decode(stdout)).modules as GraphModule[])) {
  graph.set(m.specifier, m);
}

/** Every module `roots` load before anything else runs: static value imports, not `import()` or `import type`. */
function loadedWith(...roots: string[]): Set<string> {
  const seen = new Set<string>();
  const todo = roots.map((r) => {
    const url = new URL(r, ROOT).href;
    assert.ok(graph.has(url), `${r} is in main.ts's graph`);
    return url;
  });
  for (let s = todo.pop(); s !== undefined; s = todo.pop()) {
    if (seen.has(s)) continue;
    seen.add(s);
    for (const d of graph.get(s)?.dependencies ?? []) {
      if (d.code && !d.isDynamic) todo.push(d.code.specifier);
    }
  }
  return seen;
}

const zodIn = (modules: Set<string>) =>
  [...modules].filter((s) => s.includes("/node_modules/zod/"));

Deno.test("zod is not loaded by --help, --version or the start of any command", () => {
  assert.ok(zodIn(loadedWith("main.ts")).length === 0, zodIn(loadedWith("main.ts")).join("\n"));
});

Deno.test("zod is not loaded by the bridge's start-up, only with the custody signer", () => {
  // What `service rpc` imports to serve (lib/cli/rpc.ts and its loadBridge()) and the client
  // it builds (platformClient() in lib/cli/command.ts).
  const startUp = loadedWith(
    "lib/cli/rpc.ts",
    "lib/rpc/chains.ts",
    "lib/rpc/upstream.ts",
    "lib/rpc/ipc_upstream.ts",
    "lib/rpc/bridge.ts",
    "lib/rpc/lazy_signer.ts",
    "lib/rpc/supervisor.ts",
    "lib/platform/credentials.ts",
    "lib/platform/client.ts",
  );
  assert.ok(zodIn(startUp).length === 0, zodIn(startUp).join("\n"));
  // The custody signer, which LazySigner loads at the first call, checks answers with it.
  assert.ok(zodIn(loadedWith("lib/rpc/custody.ts")).length > 0, "custody.ts loads zod");
});

Deno.test("the commands that talk to the platform load zod with the platform's operations", () => {
  for (const m of ["lib/platform/mod.ts", "lib/platform/schemas.ts", "lib/platform/vaults.ts"]) {
    assert.ok(zodIn(loadedWith(m)).length > 0, `${m} loads zod`);
  }
});
