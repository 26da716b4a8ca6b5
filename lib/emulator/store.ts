/**
 * The emulator's state: one SQLite database (`node:sqlite`, no dependency),
 * in memory by default or in a file. A file database uses WAL with
 * `synchronous=FULL`, so every write that returned before an answer was sent
 * survives a SIGKILL. Each area's store adds its tables with `CREATE TABLE
 * IF NOT EXISTS`; the schema only ever grows.
 *
 * A state file holds secrets (the API key, the API user's private key, the
 * webhook signing key), and so do its `-wal` and `-shm` companions, which
 * SQLite creates with the main file's mode. The file is therefore created
 * 0600 before SQLite opens it, and every one of the three is set to 0600 on
 * open whatever the process's umask (see {@linkcode makePrivate}).
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";

/** A row as `node:sqlite` returns it. */
export type Row = Record<string, unknown>;

/** Base tables every emulator has: key/value metadata (API user, chain). */
const BASE_SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/** `db.isTransaction`: there at run time (Deno 2.9, checked), missing from its bundled types. */
function inTransaction(db: DatabaseSync): boolean {
  return (db as unknown as { isTransaction: boolean }).isTransaction;
}

/**
 * Runs `fn` in one SQLite transaction on `db`; a call made while a
 * transaction is already open on the connection (by anyone) joins it. `fn`
 * must be synchronous: nothing else may interleave on the connection.
 *
 * @example
 * ```ts
 * const { db } = Store.open();
 * withTransaction(db, () => db.exec("INSERT INTO meta VALUES ('a', 'b')"));
 * ```
 */
export function withTransaction<T>(db: DatabaseSync, fn: () => T): T {
  if (inTransaction(db)) return fn();
  db.exec("BEGIN IMMEDIATE");
  try {
    const out = fn();
    db.exec("COMMIT");
    return out;
  } catch (e) {
    if (inTransaction(db)) db.exec("ROLLBACK");
    throw e;
  }
}

/** The files SQLite keeps next to a database `path` (WAL, shared memory, rollback journal). */
export function companionFiles(path: string): string[] {
  return [`${path}-wal`, `${path}-shm`, `${path}-journal`];
}

/**
 * Makes `path` readable by its owner only (0600), creating it empty and
 * private if it does not exist; `companions` that exist are set 0600 too.
 * Independent of the umask: the mode is set with chmod after creation. A
 * no-op on Windows (no POSIX modes).
 *
 * @example
 * ```ts
 * makePrivate("/tmp/emu.sqlite", companionFiles("/tmp/emu.sqlite"));
 * ```
 */
export function makePrivate(path: string, companions: readonly string[] = []): void {
  if (Deno.build.os === "windows") return;
  Deno.openSync(path, { create: true, read: true, write: true, mode: 0o600 }).close();
  Deno.chmodSync(path, 0o600);
  for (const c of companions) {
    try {
      Deno.chmodSync(c, 0o600);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
}

/**
 * The SQLite store.
 *
 * @example
 * ```ts
 * const store = Store.open(); // in memory
 * store.setMeta("hello", "world");
 * ```
 */
export class Store {
  /** The underlying connection; areas prepare their own statements on it. */
  readonly db: DatabaseSync;
  /** The database file, or `undefined` in memory. */
  readonly path: string | undefined;

  private constructor(db: DatabaseSync, path: string | undefined) {
    this.db = db;
    this.path = path;
  }

  /**
   * Opens (creating if needed) the database at `path`, or an in-memory one.
   * A file database and its WAL and shared-memory files are 0600 (owner
   * only) whatever the umask: the file is made private before SQLite opens
   * it (SQLite gives its companions the main file's mode), and the
   * companions are set 0600 again once WAL mode has created them.
   */
  static open(path?: string): Store {
    if (path) makePrivate(path, companionFiles(path));
    const db = new DatabaseSync(path ?? ":memory:");
    try {
      if (path) {
        db.exec("PRAGMA journal_mode=WAL");
        db.exec("PRAGMA synchronous=FULL");
        db.exec("PRAGMA busy_timeout=5000");
      }
      db.exec(BASE_SCHEMA);
      if (path) makePrivate(path, companionFiles(path));
    } catch (e) {
      db.close();
      throw e;
    }
    return new Store(db, path);
  }

  /** Reads a metadata value. */
  getMeta(key: string): string | undefined {
    const row = this.db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as
      | Row
      | undefined;
    return row ? String(row.value) : undefined;
  }

  /** Writes a metadata value. */
  setMeta(key: string, value: string): void {
    this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)").run(key, value);
  }

  /** Closes the connection (idempotent). */
  close(): void {
    try {
      this.db.close();
    } catch { /* already closed */ }
  }
}
