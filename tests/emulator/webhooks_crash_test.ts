/**
 * Nothing is lost: the emulator (a real process with --state FILE) is
 * SIGKILLed with deliveries in flight; after a restart on the same file
 * every acknowledged notification is delivered (at-least-once), the
 * breaker's suspension, the waiting notifications, the outbox and the
 * signing key (JWKS) all survived.
 */

import assert from "node:assert/strict";
import { startEmulatorProcess } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { startReceiver } from "../support/receiver.ts";
import { startAnvil } from "../support/tools.ts";

Deno.test("after SIGKILL with deliveries in flight and a restart, every notification ends delivered and nothing vanishes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "webhooks-crash-" });
  const state = `${dir}/state.sqlite`;
  let firstLife = true;
  let badAnswer = 500;
  const rc = startReceiver({
    script: (n, body) => {
      if (body.eventType === "transaction.status.updated") return badAnswer;
      // in the first life every 10th request hangs, so attempts are in flight at the kill
      return firstLife && n % 10 === 0 ? "hang" : 200;
    },
  });
  const args = ["--state", state, "--timeScale", "1000", "--deliveryTimeout", "20s"];
  const anvil = await startAnvil();
  let emu = await startEmulatorProcess(anvil.url, args);
  const jwksBefore = await (await fetch(emu.ready.jwksUrl)).json();
  try {
    const main = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: `${rc.url}/main`, events: ["transaction.created"] },
    });
    const bad = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: `${rc.url}/bad`, events: ["transaction.status.updated"] },
    });
    // the bad endpoint fails once and is suspended at once (100% > 80%)
    await emu.api("POST", "/admin/notifications", {
      body: { eventType: "transaction.status.updated", resourceId: "b" },
    });
    await waitFor(
      "the bad endpoint's suspension",
      async () =>
        (await emu.api<{ status: string }>("GET", `/v1/webhooks/${bad.data.id}`)).data.status ===
          "SUSPENDED",
    );
    await emu.api("POST", "/admin/notifications", {
      body: { eventType: "transaction.status.updated", resourceId: "b", count: 2 },
    });

    const acked: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await emu.api<{ data: { id: string }[] }>("POST", "/admin/notifications", {
        body: { eventType: "transaction.created", resourceId: `r${i}`, count: 50 },
      });
      assert.equal(r.status, 201);
      acked.push(...r.data.data.map((n) => n.id));
    }
    await rc.waitForCount(60, 30_000);
    await emu.kill(); // SIGKILL: no clean shutdown
    const seenInFirstLife = rc.received.filter((r) => r.json.eventType === "transaction.created");
    const hungAtKill = seenInFirstLife.filter((r) => r.answered === "hang").length;
    assert.ok(hungAtKill >= 1, "some attempts were in flight at the kill");
    assert.ok(new Set(seenInFirstLife.map((r) => r.json.id)).size < acked.length, "killed mid-way");
    firstLife = false;

    emu = await startEmulatorProcess(anvil.url, args);
    const jwksAfter = await (await fetch(emu.ready.jwksUrl)).json();
    assert.deepEqual(jwksAfter, jwksBefore, "the signing key survived the restart");

    await waitFor(
      "every notification to end after the restart",
      async () => {
        const r = await emu.api<{ total: number }>(
          "GET",
          `/v1/webhooks/${main.data.id}/notifications`,
          {
            query: { statuses: ["IN_PROGRESS", "ON_HOLD"] },
          },
        );
        return r.data.total === 0;
      },
      60_000,
      100,
    );
    const completed: string[] = [];
    let cursor: string | undefined;
    let total: number | undefined;
    do {
      const r = await emu.api<
        { data: { id: string; status: string }[]; next: string | null; total?: number }
      >(
        "GET",
        `/v1/webhooks/${main.data.id}/notifications`,
        { query: { pageSize: 100, pageCursor: cursor } },
      );
      total ??= r.data.total;
      for (const n of r.data.data) {
        assert.equal(n.status, "COMPLETED", `${n.id} ended ${n.status}`);
        completed.push(n.id);
      }
      cursor = r.data.next ?? undefined;
    } while (cursor);
    assert.equal(total, acked.length);
    assert.deepEqual(
      [...completed].sort(),
      [...acked].sort(),
      "every acknowledged notification is there",
    );
    // at-least-once: the receiver answered 200 to each of them at least once
    const delivered = new Set(rc.received.filter((r) => r.answered === 200).map((r) => r.json.id));
    for (const id of acked) assert.ok(delivered.has(id), `${id} never delivered`);
    // the attempts cut by the kill were made again: those notifications have a recorded 200
    const cut = seenInFirstLife.filter((r) => r.answered === "hang").map((r) => r.json.id);
    for (const id of cut) {
      const a = await emu.api<{ data: { responseCode?: number }[] }>(
        "GET",
        `/v1/webhooks/${main.data.id}/notifications/${id}/attempts`,
      );
      assert.ok(a.data.data.some((x) => x.responseCode === 200), `${id}: no recorded delivery`);
    }

    // the breaker's suspension survived, with its notifications waiting and the e-mail kept
    const b = await emu.api<{ status: string }>("GET", `/v1/webhooks/${bad.data.id}`);
    assert.equal(b.data.status, "SUSPENDED");
    const held = await emu.api<{ total: number }>(
      "GET",
      `/v1/webhooks/${bad.data.id}/notifications`,
      {
        query: { statuses: ["ON_HOLD"] },
      },
    );
    assert.equal(held.data.total, 3);
    const box = await emu.api<{ data: { webhookId: string }[] }>("GET", "/admin/outbox");
    assert.ok(box.data.data.some((m) => m.webhookId === bad.data.id));
    badAnswer = 200;
    await emu.api("PATCH", `/v1/webhooks/${bad.data.id}`, { body: { enabled: true } });
    await waitFor(
      "the held notifications to be delivered",
      async () =>
        (await emu.api<{ total: number }>("GET", `/v1/webhooks/${bad.data.id}/notifications`, {
          query: { statuses: ["COMPLETED"] },
        })).data.total === 3,
    );
  } finally {
    await rc.close();
    await emu.stop();
    await anvil.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
