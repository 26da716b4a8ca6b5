/**
 * The emulator's own transactions emit `transaction.created` and
 * `transaction.status.updated` (resourceId = the transaction id), which
 * become signed deliveries to the subscribed endpoints; the console's JSON
 * routes show the endpoints and their notifications.
 */

import assert from "node:assert/strict";
import { startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { startReceiver } from "../support/receiver.ts";

Deno.test("a transaction made through the API is delivered as transaction.created and status updates", async () => {
  const emu = await startEmulatorOnAnvil([]);
  const rc = startReceiver({ jwksUrl: emu.ready.jwksUrl });
  try {
    const both = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: {
        url: `${rc.url}/both`,
        events: ["transaction.created", "transaction.status.updated"],
      },
    });
    const createdOnly = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: `${rc.url}/created`, events: ["transaction.created"] },
    });
    const off = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: `${rc.url}/off`, events: ["transaction.created"], enabled: false },
    });
    assert.equal(off.status, 201);
    const tx = await emu.api<{ id: string; status: string }>("POST", "/v1/transactions", {
      body: {
        operation: "TRANSFER",
        assetId: "ETH_TEST_31337",
        source: { type: "VAULT_ACCOUNT", id: "0" },
        destination: {
          type: "ONE_TIME_ADDRESS",
          oneTimeAddress: { address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" },
        },
        amount: "0.5",
      },
    });
    assert.equal(tx.status, 200, JSON.stringify(tx.data));
    const final = await waitFor("the transaction to end", async () => {
      const t = await emu.api<{ status: string }>("GET", `/v1/transactions/${tx.data.id}`);
      const done = ["COMPLETED", "FAILED", "CANCELLED", "REJECTED", "BLOCKED", "TIMEOUT"];
      return done.includes(t.data.status) ? t.data.status : undefined;
    });
    assert.equal(final, "COMPLETED");
    const toBoth = () => rc.received.filter((r) => r.json.webhookId === both.data.id);
    await waitFor(
      `the ${final} status update`,
      () =>
        toBoth().some((r) =>
          r.json.eventType === "transaction.status.updated" &&
          (r.json.data as { status?: string }).status === final
        ),
      10_000,
    );
    const created = toBoth().filter((r) => r.json.eventType === "transaction.created");
    assert.equal(created.length, 1);
    assert.equal(created[0].json.resourceId, tx.data.id);
    assert.equal((created[0].json.data as { id: string }).id, tx.data.id);
    const updates = toBoth().filter((r) => r.json.eventType === "transaction.status.updated");
    // at least BROADCASTING/CONFIRMING/COMPLETED on the way
    assert.ok(updates.length >= 2, `only ${updates.length} status updates`);
    assert.ok(updates.every((r) => r.json.resourceId === tx.data.id));
    const toCreatedOnly = rc.received.filter((r) => r.json.webhookId === createdOnly.data.id);
    assert.deepEqual(toCreatedOnly.map((r) => r.json.eventType), ["transaction.created"]);
    assert.equal(rc.received.filter((r) => r.json.webhookId === off.data.id).length, 0);
    // and not only "not yet": notifications are made when the event happens, so once the
    // final update reached "both", the others' notifications all exist; there are no more
    for (const [w, total] of [[createdOnly.data.id, 1], [off.data.id, 0]] as const) {
      const r = await emu.api<{ total: number }>("GET", `/v1/webhooks/${w}/notifications`);
      assert.equal(r.data.total, total, `${w}: notifications`);
    }
    assert.ok(rc.received.every((r) => r.signatureOk && r.json.workspaceId));

    // the API lists them by resource
    const byRes = await emu.api<{ total: number }>(
      "GET",
      `/v1/webhooks/${both.data.id}/notifications`,
      { query: { resourceId: tx.data.id, events: ["transaction.created"] } },
    );
    assert.equal(byRes.data.total, 1);

    // the console shows the endpoints, their status and their notifications
    const token = new URL(emu.ready.consoleUrl).searchParams.get("token")!;
    const consoleGet = async (path: string) => {
      const r = await fetch(`${emu.ready.apiBaseUrl}/console/api/${path}`, {
        headers: { "x-console-token": token },
      });
      assert.equal(r.status, 200);
      return await r.json();
    };
    const hooks: { id: string; status: string }[] = (await consoleGet("webhooks")).data;
    assert.deepEqual(
      hooks.map((w) => [w.id, w.status]),
      [[both.data.id, "ENABLED"], [createdOnly.data.id, "ENABLED"], [off.data.id, "DISABLED"]],
    );
    const listed = await consoleGet(
      `webhooks/${both.data.id}/notifications?resourceId=${tx.data.id}`,
    );
    assert.ok(listed.total >= 2, "created and at least one status update");
    assert.ok(listed.data.every((n: { resourceId: string }) => n.resourceId === tx.data.id));
  } finally {
    await rc.close();
    await emu.stop();
  }
});
