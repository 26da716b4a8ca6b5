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

import { makeOwnedTempDir, removeStaleOwnedDirs } from "../core/owned_temp_dir.ts";

const PREFIX = "service-emulator-";

/** Makes a fresh 0700 key directory owned by this process; returns its path. */
export async function makeKeyDir(): Promise<string> {
  return await makeOwnedTempDir(PREFIX);
}

/**
 * Removes the key directories next to `own` (itself excepted) that belong to
 * this user and whose owner process is dead. Returns the paths removed.
 * Where liveness cannot be told (no `/proc`), removes nothing.
 */
export async function removeStaleKeyDirs(own: string): Promise<string[]> {
  return await removeStaleOwnedDirs(PREFIX, own);
}
