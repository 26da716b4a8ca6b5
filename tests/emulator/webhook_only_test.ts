/**
 * `service emulator` without `--rpcUrl`, as a backend engineer who only
 * tests a webhook receiver runs it: it starts with no node, webhooks are
 * created, triggered and delivered (signed), notifications and the console
 * answer, and a transaction or vault call answers one error saying a node
 * is needed (never a crash, never a hang on a missing node).
 */

import assert from "node:assert/strict";
import { apiCaller, clientForReady, spawnEmulator } from "../support/emulator_process.ts";
import { startReceiver } from "../support/receiver.ts";

Deno.test("the emulator without a node serves the webhook side and delivers", async () => {
  const emu = await spawnEmulator(["--port", "0", "--timeScale", "1000"]);
  const receiver = startReceiver({ jwksUrl: emu.ready.jwksUrl });
  try {
    const api = apiCaller(await clientForReady(emu.ready));
    const created = await api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: `${receiver.url}/hook`, events: ["transaction.created"] },
    });
    assert.equal(created.status, 201);
    const trigger = await fetch(`${emu.ready.adminUrl}/notifications`, {
      method: "POST",
      headers: { "X-API-Key": emu.ready.apiKey, "Content-Type": "application/json" },
      body: JSON.stringify({ eventType: "transaction.created", resourceId: "tx-1", count: 2 }),
    });
    assert.equal(trigger.status, 201);
    await trigger.body?.cancel();
    await receiver.waitForCount(2, 30_000);
    assert.ok(receiver.received.every((r) => r.signatureOk), "deliveries are signed");
    assert.deepEqual(receiver.received.map((r) => r.json.resourceId), ["tx-1", "tx-1"]);
    const list = await api<{ data: unknown[]; total: number }>(
      "GET",
      `/v1/webhooks/${created.data.id}/notifications`,
    );
    assert.equal(list.status, 200);
    assert.equal(list.data.total, 2);
    const token = new URL(emu.ready.consoleUrl).searchParams.get("token")!;
    const overview = await fetch(`${emu.ready.apiBaseUrl}/console/api/overview`, {
      headers: { "x-console-token": token },
    });
    assert.equal(overview.status, 200);
    await overview.body?.cancel();
    for (
      const [method, path] of [
        ["GET", "/v1/vault/accounts_paged"],
        ["POST", "/v1/transactions"],
        ["GET", "/v1/transactions"],
      ] as const
    ) {
      const r = await api<{ message: string }>(method, path, {
        body: method === "POST" ? {} : undefined,
      });
      assert.equal(r.status, 400, path);
      assert.match(r.data.message, /needs a node.*--rpcUrl/, path);
    }
    assert.equal((await emu.stop("SIGTERM")).code, 0);
    assert.match(emu.stderr(), /no node \(webhooks only/);
  } finally {
    await receiver.close();
    await emu.stop().catch(() => {});
  }
});
