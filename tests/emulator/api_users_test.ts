/**
 * API users with roles (`--apiUser ROLE[:NAME]`), through the official
 * TypeScript SDK (`@fireblocks/ts-sdk` from npm, unchanged), one client per
 * user of one workspace: a VIEWER lists transactions and webhooks and is
 * refused (403, the platform's `{message, code}` naming its role) creating a
 * transaction or a webhook; a SIGNER creates transactions and resends
 * notifications, and is refused creating, changing or deleting webhooks; the
 * default ADMIN does all. Transactions and webhooks are the workspace's:
 * every user sees them, and each transaction's `createdBy` is its maker's
 * id, shown by name in the console. A restart with the same `--state` keeps
 * each user's key.
 */

import assert from "node:assert/strict";
import { Fireblocks as OfficialSdk } from "@fireblocks/ts-sdk";
import { type Fixture, startFixture } from "../support/emulator_fixture.ts";
import { startEmulator } from "../../lib/emulator/mod.ts";
import type { RunningApiUser, RunningEmulator } from "../../lib/emulator/mod.ts";

const ACCOUNT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

function sdkOf(emu: RunningEmulator, user: RunningApiUser): OfficialSdk {
  return new OfficialSdk({
    apiKey: user.apiKey,
    secretKey: user.privateKeyPem,
    basePath: `${emu.apiBaseUrl}/v1`,
  });
}

/** The status, code and message of an SDK call that is expected to be refused. */
async function refused(p: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await p;
  } catch (e) {
    const r = (e as { response?: { statusCode: number; data: { message: string; code: number } } })
      .response;
    assert.ok(r, `an HTTP answer, not ${e}`);
    assert.equal(typeof r.data.code, "number");
    assert.deepEqual(Object.keys(r.data).sort(), ["code", "message"]);
    return { status: r.statusCode, message: r.data.message };
  }
  throw new Error("the call succeeded; a refusal was expected");
}

Deno.test("API users with roles: Viewer reads, Signer sends, Admin manages webhooks", async () => {
  const fx: Fixture = await startFixture({ apiUsers: ["VIEWER:dashboard", "signer:ci"] });
  try {
    const users = fx.emu.apiUsers;
    assert.deepEqual(users.map((u) => [u.name, u.role]), [
      ["default", "ADMIN"],
      ["dashboard", "VIEWER"],
      ["ci", "SIGNER"],
    ]);
    assert.equal(users[0].apiKey, fx.emu.apiKey);
    assert.equal(new Set(users.map((u) => u.apiKey)).size, 3, "a key each");
    assert.equal(new Set(users.map((u) => u.privateKeyPem)).size, 3, "a key pair each");
    for (const u of users) {
      assert.equal(Deno.statSync(u.privateKeyPath).mode! & 0o777, 0o600);
      assert.equal(Deno.readTextFileSync(u.privateKeyPath), u.privateKeyPem);
    }
    const [admin, viewer, signer] = users.map((u) => sdkOf(fx.emu, u));
    const transfer = {
      operation: "TRANSFER" as const,
      assetId: fx.emu.assetId,
      source: { type: "VAULT_ACCOUNT" as const, id: "0" },
      destination: { type: "ONE_TIME_ADDRESS" as const, oneTimeAddress: { address: ACCOUNT1 } },
      amount: "0.001",
    };

    // the Signer creates a transaction; every user sees it
    const made = await signer.transactions.createTransaction({ transactionRequest: transfer });
    assert.equal(made.statusCode, 200);
    const txId = made.data.id!;
    await fx.waitTx(txId);
    const seen = await viewer.transactions.getTransactions({});
    assert.equal(seen.statusCode, 200);
    assert.deepEqual(seen.data.map((t) => t.id), [txId]);
    const byViewer = await viewer.transactions.getTransaction({ txId });
    const byAdmin = await admin.transactions.getTransaction({ txId });
    assert.equal(byViewer.data.createdBy, byAdmin.data.createdBy);

    // the Viewer may not create a transaction: 403 naming its role, and nothing was made
    const noTx = await refused(viewer.transactions.createTransaction({
      transactionRequest: transfer,
    }));
    assert.equal(noTx.status, 403);
    assert.match(
      noTx.message,
      /API user dashboard is a VIEWER and may not call POST \/v1\/transactions /,
    );
    assert.match(noTx.message, /A VIEWER may only read/);
    assert.equal((await admin.transactions.getTransactions({})).data.length, 1);
    // nor cancel one, nor estimate a fee (the SDK's notes)
    assert.equal((await refused(viewer.transactions.cancelTransaction({ txId }))).status, 403);
    assert.equal(
      (await refused(viewer.transactions.estimateTransactionFee({ transactionRequest: transfer })))
        .status,
      403,
    );

    // webhooks: the Admin creates one; the Viewer and the Signer see it and may not manage it
    const hook = await admin.webhooksV2.createWebhook({
      createWebhookRequest: { url: "http://127.0.0.1:9/hook", events: ["transaction.created"] },
    });
    assert.equal(hook.statusCode, 201);
    const webhookId = hook.data.id;
    for (const sdk of [viewer, signer]) {
      assert.deepEqual((await sdk.webhooksV2.getWebhooks({})).data.data.map((w) => w.id), [
        webhookId,
      ]);
    }
    const create = { url: "http://127.0.0.1:9/other", events: ["transaction.created" as const] };
    const viewerHook = await refused(
      viewer.webhooksV2.createWebhook({ createWebhookRequest: create }),
    );
    assert.equal(viewerHook.status, 403);
    assert.match(
      viewerHook.message,
      /VIEWER and may not call POST \/v1\/webhooks \(createWebhook\)/,
    );
    const signerHook = await refused(
      signer.webhooksV2.createWebhook({ createWebhookRequest: create }),
    );
    assert.equal(signerHook.status, 403);
    assert.match(
      signerHook.message,
      /API user ci is a SIGNER .*it needs ADMIN or NON_SIGNING_ADMIN\. A SIGNER may read, send/,
    );
    assert.equal(
      (await refused(signer.webhooksV2.updateWebhook({
        webhookId,
        updateWebhookRequest: { description: "x" },
      }))).status,
      403,
    );
    assert.equal((await refused(signer.webhooksV2.deleteWebhook({ webhookId }))).status, 403);
    // a Signer may resend (the SDK's note), a Viewer may not
    const resend = { webhookId, resendNotificationsByResourceIdRequest: { resourceId: txId } };
    assert.equal(
      (await signer.webhooksV2.resendNotificationsByResourceId(resend)).statusCode,
      202,
    );
    assert.equal(
      (await refused(viewer.webhooksV2.resendNotificationsByResourceId(resend))).status,
      403,
    );
    assert.equal((await admin.webhooksV2.getWebhooks({})).data.data.length, 1, "none was added");

    // the Signer's transaction is its own in createdBy; the Admin's is another user's
    const mine = await admin.transactions.createTransaction({ transactionRequest: transfer });
    await fx.waitTx(mine.data.id!);
    const adminTx = await admin.transactions.getTransaction({ txId: mine.data.id! });
    assert.notEqual(adminTx.data.createdBy, byAdmin.data.createdBy);

    // the console names the user who made each transaction
    const token = new URL(fx.emu.consoleUrl).searchParams.get("token")!;
    const overview = await (await fetch(`${fx.emu.apiBaseUrl}/console/api/overview`, {
      headers: { "x-console-token": token },
    })).json();
    const by = Object.fromEntries(
      overview.transactions.map((t: { id: string; createdBy: string }) => [t.id, t.createdBy]),
    );
    assert.deepEqual(by, { [txId]: "ci (SIGNER)", [mine.data.id!]: "default (ADMIN)" });

    // the admin endpoint (the emulator's controls) takes an ADMIN's key only
    const adminCall = (key: string) =>
      fetch(`${fx.emu.adminUrl}/faults`, { headers: { "X-API-Key": key } });
    assert.equal((await adminCall(users[1].apiKey)).status, 401);
    assert.equal((await adminCall(users[0].apiKey)).status, 200);
  } finally {
    await fx.stop();
  }
});

Deno.test("--apiUser: bad roles and names are refused at start; a restart keeps each user's key", async () => {
  await assert.rejects(
    startEmulator({ apiUsers: ["OWNER"] }),
    /role must be one of ADMIN, NON_SIGNING_ADMIN/,
  );
  await assert.rejects(startEmulator({ apiUsers: ["VIEWER:a b"] }), /name must be 1 to 64/);
  await assert.rejects(startEmulator({ apiUsers: ["VIEWER:x", "SIGNER:x"] }), /given twice/);
  const dir = await Deno.makeTempDir();
  try {
    const state = `${dir}/emu.sqlite`;
    const first = await startEmulator({ state, apiUsers: ["EDITOR", "EDITOR", "VIEWER:v"] });
    const before = first.apiUsers;
    await first.stop();
    assert.deepEqual(before.map((u) => u.name), ["default", "editor", "editor-2", "v"]);
    // the same users again, in another order and one role changed: same keys by name
    const second = await startEmulator({ state, apiUsers: ["APPROVER:v", "EDITOR", "EDITOR"] });
    try {
      const after = new Map(second.apiUsers.map((u) => [u.name, u]));
      for (const u of before) assert.equal(after.get(u.name)?.apiKey, u.apiKey, u.name);
      assert.equal(after.get("v")?.role, "APPROVER");
      assert.equal(second.apiKey, first.apiKey);
    } finally {
      await second.stop();
    }
    // a restart without --apiUser: the default user only (the others are kept, unused)
    const third = await startEmulator({ state });
    try {
      assert.deepEqual(third.apiUsers.map((u) => u.name), ["default"]);
    } finally {
      await third.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
