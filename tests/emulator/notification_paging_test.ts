import assert from "node:assert/strict";
import { SNAPSHOT_TTL_MS, SnapshotPager } from "../../lib/emulator/webhooks/notification_paging.ts";

Deno.test("pages walk the snapshot taken at the first page, whatever happens later", () => {
  const now = 1_000;
  const pager = new SnapshotPager(() => now);
  const seqs = Array.from({ length: 25 }, (_, i) => 100 - i);
  const first = pager.first("w1", seqs, 10);
  assert.deepEqual(first.page, seqs.slice(0, 10));
  assert.ok(first.next);
  const second = pager.next("w1", first.next!, 10);
  assert.deepEqual(second.page, seqs.slice(10, 20));
  const third = pager.next("w1", second.next!, 10);
  assert.deepEqual(third.page, seqs.slice(20));
  assert.equal(third.next, null);
  // the page size may change between pages
  const again = pager.first("w1", seqs, 5);
  const big = pager.next("w1", again.next!, 100);
  assert.deepEqual(big.page, seqs.slice(5));
  assert.equal(big.next, null);
  // everything on one page: no cursor
  assert.deepEqual(pager.first("w1", [1, 2], 10), { page: [1, 2], next: null });
});

Deno.test("a cursor of another webhook, a forged one or an expired one is refused with a way out", () => {
  let now = 1_000;
  const pager = new SnapshotPager(() => now);
  const { next } = pager.first("w1", [1, 2, 3], 1);
  assert.throws(() => pager.next("w2", next!, 1), /omit it to start again/);
  assert.throws(() => pager.next("w1", "garbage", 1), /omit it to start again/);
  assert.throws(() => pager.next("w1", btoa('{"s":"x","o":-1}'), 1), /omit it to start again/);
  now += SNAPSHOT_TTL_MS + 1;
  assert.throws(() => pager.next("w1", next!, 1), /expired/);
});
