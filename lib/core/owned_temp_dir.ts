/**
 * Private temporary directories named after their owner process
 * (`<prefix><pid>-<random>`, 0700), so that the exits where no code runs
 * (SIGKILL, a crash, a power cut) leave nothing behind for long: the next run
 * that makes one removes the directories of this user, with the same prefix,
 * whose owner process is dead. Used by the emulator's key directory
 * (`service-emulator-`) and the bridge's socket directory (`service-rpc-`).
 *
 * The pid is in the name rather than in a file inside, so there is no moment
 * when a directory exists without its owner recorded.
 *
 * @module
 */

/**
 * Makes a fresh 0700 directory owned by this process; returns its path.
 *
 * @example
 * ```ts
 * const dir = await makeOwnedTempDir("service-rpc-"); // /tmp/service-rpc-1234-abcd
 * ```
 */
export async function makeOwnedTempDir(prefix: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: `${prefix}${Deno.pid}-` });
  await Deno.chmod(dir, 0o700);
  return dir;
}

/** True when process `pid` is alive; `undefined` when this system cannot tell (no /proc). */
async function alive(pid: number): Promise<boolean | undefined> {
  const exists = (path: string) => Deno.stat(path).then(() => true, () => false);
  return await exists("/proc/self") ? await exists(`/proc/${pid}`) : undefined;
}

/**
 * Removes the directories next to `own` (itself excepted) named
 * `<prefix><pid>-*` that belong to this user and whose owner process is dead.
 * Returns the paths removed. Where liveness cannot be told (no `/proc`),
 * removes nothing.
 *
 * @example
 * ```ts
 * const dir = await makeOwnedTempDir("service-rpc-");
 * await removeStaleOwnedDirs("service-rpc-", dir);
 * ```
 */
export async function removeStaleOwnedDirs(prefix: string, own: string): Promise<string[]> {
  const name = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(\\d+)-[^/]+$`);
  const parent = own.replace(/[\\/][^\\/]+$/, "");
  const uid = Deno.uid();
  const removed: string[] = [];
  try {
    for await (const entry of Deno.readDir(parent)) {
      const m = name.exec(entry.name);
      if (!m || !entry.isDirectory) continue;
      const path = `${parent}/${entry.name}`;
      if (path === own || Number(m[1]) === Deno.pid) continue;
      try {
        const info = await Deno.lstat(path);
        if (!info.isDirectory || (uid !== null && info.uid !== uid)) continue;
        if (await alive(Number(m[1])) !== false) continue;
        await Deno.remove(path, { recursive: true });
        removed.push(path);
      } catch { /* gone meanwhile, or not ours to remove */ }
    }
  } catch { /* the temporary directory cannot be listed: nothing to sweep */ }
  return removed;
}
