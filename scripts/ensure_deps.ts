/**
 * Installs the npm packages (viem, zod, anvil/cast/forge, solc, the test
 * clients) when `node_modules` is missing or older than the lock file. Used by
 * `deno task service` (run as a script: `deno run -A scripts/ensure_deps.ts`),
 * `deno task test` and `deno task demo` so both work on a fresh clone.
 *
 * @module
 */

const root = new URL("..", import.meta.url).pathname;

async function exists(p: string): Promise<boolean> {
  try {
    await Deno.stat(p);
    return true;
  } catch {
    return false;
  }
}

async function npm(args: string[]): Promise<number> {
  const { code } = await new Deno.Command("npm", {
    args,
    cwd: root,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  return code;
}

/** Runs `npm ci` (falling back to `npm install`) unless the install is current. */
export async function ensureNodeModules(who: string): Promise<void> {
  // A symlinked node_modules belongs to another checkout (e.g. a git worktree
  // sharing one install): never reinstall through the link.
  try {
    if ((await Deno.lstat(`${root}node_modules`)).isSymlink) return;
  } catch {
    // absent: install below
  }
  const marker = `${root}node_modules/.package-lock.json`;
  const fresh = await exists(marker) &&
    (await Deno.stat(marker)).mtime! >= (await Deno.stat(`${root}package-lock.json`)).mtime!;
  if (fresh) return;
  console.error(`${who}: installing npm packages (npm ci)...`);
  if (await npm(["ci", "--no-audit", "--no-fund"]) !== 0) {
    console.error(`${who}: npm ci failed; trying npm install with the lock file`);
    if (await npm(["install", "--no-audit", "--no-fund"]) !== 0) {
      throw new Error("npm install failed: the npm packages cannot be installed");
    }
  }
}

if (import.meta.main) {
  // `deno task service` runs this first: a fresh clone installs what it needs on first use.
  try {
    await ensureNodeModules(Deno.args[0] ?? "service");
  } catch (e) {
    console.error(`${Deno.args[0] ?? "service"}: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
