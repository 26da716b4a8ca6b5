/**
 * Installs the npm packages when `node_modules` lacks what a task needs or is
 * older than the lock file, so that every task works on a fresh clone:
 * `deno task service` (through `scripts/preload_deps.ts`, in the same Deno
 * process as the program), `deno task test` and `deno task demo` need them all
 * (viem, anvil/cast/forge, solc, the test clients); `deno task pack` needs only
 * the program's own (`dependencies`: viem, zod) and installs only those.
 *
 * @module
 */

const root = new URL("..", import.meta.url).pathname;

/** What a task needs: the program's own packages, or everything (tests, demo, tools). */
export type DependencyScope = "runtime" | "all";

async function exists(p: string): Promise<boolean> {
  try {
    await Deno.stat(p);
    return true;
  } catch {
    return false;
  }
}

async function npm(args: string[]): Promise<number> {
  try {
    const { code } = await new Deno.Command("npm", {
      args,
      cwd: root,
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    return code;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error(
        "npm is not on PATH: install Node.js (which brings npm), then run the task again",
      );
    }
    throw e;
  }
}

/**
 * The packages `scope` needs, from package.json; those the lock file ties to an
 * operating system or CPU (and the optional ones) exist on some platforms only: not checked.
 */
async function needed(scope: DependencyScope): Promise<string[]> {
  const pkg = JSON.parse(await Deno.readTextFile(`${root}package.json`));
  const lock = JSON.parse(await Deno.readTextFile(`${root}package-lock.json`));
  const names = Object.keys({
    ...pkg.dependencies,
    ...(scope === "all" ? pkg.devDependencies : {}),
  });
  return names.filter((n) => {
    const entry = lock.packages?.[`node_modules/${n}`];
    return !entry?.os && !entry?.cpu;
  });
}

/** Whether `node_modules` holds what `scope` needs and is as new as the lock file. */
async function current(scope: DependencyScope): Promise<boolean> {
  const marker = `${root}node_modules/.package-lock.json`;
  if (!await exists(marker)) return false;
  if ((await Deno.stat(marker)).mtime! < (await Deno.stat(`${root}package-lock.json`)).mtime!) {
    return false;
  }
  for (const name of await needed(scope)) {
    if (!await exists(`${root}node_modules/${name}/package.json`)) return false;
  }
  return true;
}

/**
 * Runs `npm ci` (falling back to `npm install`) unless the install is current;
 * `scope: "runtime"` installs only the program's own packages (`--omit=dev
 * --omit=optional`). Throws an error that says what to do when npm fails.
 */
export async function ensureNodeModules(
  who: string,
  scope: DependencyScope = "all",
): Promise<void> {
  // A symlinked node_modules belongs to another checkout (e.g. a git worktree
  // sharing one install): never reinstall through the link.
  try {
    if ((await Deno.lstat(`${root}node_modules`)).isSymlink) return;
  } catch {
    // absent: install below
  }
  if (await current(scope)) return;
  const omit = scope === "runtime" ? ["--omit=dev", "--omit=optional"] : [];
  const shown = ["ci", ...omit].join(" ");
  console.error(`${who}: installing npm packages (npm ${shown})...`);
  if (await npm(["ci", ...omit, "--no-audit", "--no-fund"]) !== 0) {
    console.error(`${who}: npm ci failed; trying npm install with the lock file`);
    if (await npm(["install", ...omit, "--no-audit", "--no-fund"]) !== 0) {
      throw new Error(
        `npm could not install the packages in ${root}node_modules (its messages are above): ` +
          `check that the npm registry is reachable (npm config get registry), run ` +
          `"npm ${shown}" in ${root}, then run the task again`,
      );
    }
  }
}

if (import.meta.main) {
  // `deno run -A scripts/ensure_deps.ts [who] [runtime|all]`
  const who = Deno.args[0] ?? "service";
  try {
    await ensureNodeModules(who, Deno.args[1] === "runtime" ? "runtime" : "all");
  } catch (e) {
    console.error(`${who}: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
