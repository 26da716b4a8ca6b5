/**
 * Stable paging of a webhook's notifications.
 *
 * Notifications change while a client pages through them (new ones arrive,
 * statuses and `updatedAt` move as deliveries happen), and the default sort
 * key (`updatedAt`) is one of those moving values. Plain keyset paging over a
 * moving key gives gaps and duplicates, so the first page (no `pageCursor`)
 * takes a snapshot: the ordered list of the matching notifications' row ids
 * at that moment. The cursor names the snapshot and an offset into it; later
 * pages return those rows (with their current fields) in the snapshot's
 * order. So every notification that matched at the first page is returned
 * exactly once, in one consistent order, and notifications created later are
 * not mixed in (start again for those).
 *
 * Snapshots live in memory (at most {@linkcode MAX_SNAPSHOTS}, each for
 * {@linkcode SNAPSHOT_TTL_MS}); a cursor whose snapshot is gone (expired, or
 * the emulator restarted) is refused with a 400 that says to start again.
 *
 * @module
 */

import { BadRequestError } from "../../core/mod.ts";
import { decodeCursor, encodeCursor } from "../http/cursor.ts";

/** Snapshots kept at once (oldest dropped first). */
export const MAX_SNAPSHOTS = 64;
/** How long a snapshot (so a cursor) stays usable: 1 hour. */
export const SNAPSHOT_TTL_MS = 3_600_000;

interface Snapshot {
  seqs: Int32Array;
  createdAt: number;
  key: string;
}

/** The snapshots of one emulator; see the module doc. */
export class SnapshotPager {
  #snaps = new Map<string, Snapshot>();
  #now: () => number;

  /** `now` is injectable for tests. */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * Starts a snapshot of `seqs` (already in order) and returns its first
   * page and the cursor of the next (null when this was all).
   * `key` ties the cursor to one webhook.
   */
  first(key: string, seqs: number[], pageSize: number): { page: number[]; next: string | null } {
    this.#gc();
    if (seqs.length <= pageSize) return { page: seqs, next: null };
    const id = crypto.randomUUID();
    this.#snaps.set(id, { seqs: Int32Array.from(seqs), createdAt: this.#now(), key });
    return { page: seqs.slice(0, pageSize), next: encodeCursor({ s: id, o: pageSize }) };
  }

  /** A later page; throws `BadRequestError` with a user-facing message for a bad or expired cursor. */
  next(key: string, cursor: string, pageSize: number): { page: number[]; next: string | null } {
    const c = decodeCursor(cursor);
    if (typeof c?.s !== "string" || !Number.isInteger(c.o) || (c.o as number) < 0) {
      throw new BadRequestError(
        "pageCursor is not a cursor this emulator gave out; omit it to start again.",
      );
    }
    this.#gc();
    const snap = this.#snaps.get(c.s);
    if (!snap || snap.key !== key) {
      throw new BadRequestError(
        "pageCursor has expired (cursors last 1 hour and do not survive a restart); omit it to start again.",
      );
    }
    const o = c.o as number;
    const page = Array.from(snap.seqs.subarray(o, o + pageSize));
    const end = o + pageSize;
    if (end >= snap.seqs.length) {
      this.#snaps.delete(c.s);
      return { page, next: null };
    }
    return { page, next: encodeCursor({ s: c.s, o: end }) };
  }

  #gc(): void {
    const cutoff = this.#now() - SNAPSHOT_TTL_MS;
    for (const [id, s] of this.#snaps) {
      if (s.createdAt < cutoff || this.#snaps.size > MAX_SNAPSHOTS) this.#snaps.delete(id);
      else break; // insertion order = age order
    }
  }
}
