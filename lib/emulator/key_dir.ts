/**
 * The in-memory emulator's private key directory (`service-emulator-<pid>-*`
 * in the system's temporary directory, holding `api.pem`): made with the
 * owner's process id in its name, removed by the emulator on stop, and, for
 * the exits where no code runs (SIGKILL, a crash, a power cut), removed by
 * the next emulator that starts: a directory of this user whose owner
 * process is dead is deleted.
 *
 * The pid is in the name rather than in a file inside, so there is no moment
 * when a directory exists without its owner recorded.
 *
 * @module
 */

const PREFIX = "service-emulator-";
const NAME = /^service-emulator-(\d+)-[^/]+$/;

/** Makes a fresh 0700 key directory owned by this process; returns its path. */
export async function makeKeyDir(): Promise<string> {
  return await Deno.makeTempDir({ prefix: `${PREFIX}${Deno.pid}-` });
}

/** True when process `pid` is alive; `undefined` when this system cannot tell (no /proc). */
async function alive(pid: number): Promise<boolean | undefined> {
  try {
    await Deno.stat("/proc/self");
  } catch {
    return undefined;
  }
  try {
    await Deno.stat(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

/**
 * Removes the key directories next to `own` (itself excepted) that belong to
 * this user and whose owner process is dead. Returns the paths removed.
 * Where liveness cannot be told (no `/proc`), removes nothing.
 */
export async function removeStaleKeyDirs(own: string): Promise<string[]> {
  const parent = own.replace(/[\\/][^\\/]+$/, "");
  const uid = Deno.uid();
  const removed: string[] = [];
  try {
    for await (const entry of Deno.readDir(parent)) {
      const m = NAME.exec(entry.name);
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
