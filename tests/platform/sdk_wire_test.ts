/**
 * Wire compatibility with the platform's official SDK: the same operations
 * sent through our client and through `@fireblocks/ts-sdk` reach one real
 * recording server; method, path, query, body, the platform's header names and
 * the JWT claim set must agree (nonce and times aside).
 */
import { Fireblocks as OfficialSdk } from "@fireblocks/ts-sdk";
import assert from "node:assert/strict";
import {
  listNotificationsPage,
  loadCredentials,
  PlatformClient,
  resendByResource,
  resendNotification,
  updateWebhook,
} from "../../lib/platform/mod.ts";
import { makeTestKeys, verifyRequestToken } from "../support/keys.ts";
import { type Recorded, startRecordingServer } from "../support/recording_server.ts";

const keys = await makeTestKeys();
const API_KEY = "9b2e7a10-1111-4222-8333-444455556666";
const WEBHOOK = {
  id: "w1",
  url: "https://example.test/hook",
  events: ["transaction.created"],
  status: "ENABLED",
  createdAt: 1,
  updatedAt: 2,
};

function claims(r: Recorded): Record<string, unknown> {
  const part = r.headers.get("authorization")!.slice(7).split(".")[1];
  return JSON.parse(
    atob(part.replace(/-/g, "+").replace(/_/g, "/") + "==".slice(0, (4 - part.length % 4) % 4)),
  );
}

function platformHeaders(r: Recorded): string[] {
  const names = ["x-api-key", "authorization", "idempotency-key"];
  if (r.body.length > 0) names.push("content-type");
  return names.filter((n) => r.headers.has(n)).sort();
}

function sortedQuery(search: string): string[] {
  return [...new URLSearchParams(search)].map(([k, v]) => `${k}=${v}`).sort();
}

Deno.test("our client and the official SDK put the same requests on the wire", async () => {
  const srv = startRecordingServer({ status: 200, body: {} });
  try {
    const base = srv.url + "/v1";
    const sdk = new OfficialSdk({ apiKey: API_KEY, secretKey: keys.pkcs8Pem, basePath: base });
    const ours = new PlatformClient(
      await loadCredentials({ apiKey: API_KEY, privateKey: keys.pkcs8Pem, apiBaseUrl: base }),
    );
    const query = {
      order: "ASC",
      sortBy: "createdAt",
      pageSize: 10,
      startTime: 1_700_000_000_000,
      endTime: 1_800_000_000_000,
      statuses: ["FAILED", "ON_HOLD"],
      events: ["transaction.created", "transaction.status.updated"],
      resourceId: "res-1",
    } as const;

    const pairs: [
      string,
      () => Promise<unknown>,
      () => Promise<unknown>,
      { status: number; body?: unknown },
    ][] = [
      [
        "list notifications with a query",
        () =>
          sdk.webhooksV2.getNotifications(
            {
              webhookId: "w1",
              ...query,
              statuses: [...query.statuses] as never,
              events: [...query.events] as never,
            } as never,
          ),
        () =>
          listNotificationsPage(ours, "w1", {
            ...query,
            statuses: [...query.statuses],
            events: [...query.events],
          }),
        { status: 200, body: { data: [], next: null } },
      ],
      [
        "resend one with an idempotency key",
        () =>
          sdk.webhooksV2.resendNotificationById({
            webhookId: "w1",
            notificationId: "n1",
            idempotencyKey: "idem-1",
          }),
        () => resendNotification(ours, "w1", "n1", "idem-1"),
        { status: 202 },
      ],
      [
        "resend by resource",
        () =>
          sdk.webhooksV2.resendNotificationsByResourceId({
            webhookId: "w1",
            resendNotificationsByResourceIdRequest: {
              resourceId: "res-1",
              excludeStatuses: ["COMPLETED"],
            } as never,
            idempotencyKey: "idem-2",
          }),
        () =>
          resendByResource(
            ours,
            "w1",
            { resourceId: "res-1", excludeStatuses: ["COMPLETED"] },
            "idem-2",
          ),
        { status: 202 },
      ],
      [
        "update a webhook",
        () =>
          sdk.webhooksV2.updateWebhook({
            webhookId: "w1",
            updateWebhookRequest: { enabled: true },
          }),
        () => updateWebhook(ours, "w1", { enabled: true }),
        { status: 200, body: WEBHOOK },
      ],
    ];

    for (const [name, viaSdk, viaOurs, answer] of pairs) {
      srv.requests.length = 0;
      srv.script.push(answer, answer);
      await viaSdk();
      await viaOurs();
      const [a, b] = srv.requests;
      assert.deepEqual(b.method, a.method, `${name}: method`);
      assert.deepEqual(b.path, a.path, `${name}: path`);
      assert.deepEqual(sortedQuery(b.search), sortedQuery(a.search), `${name}: query`);
      const bodyA = a.body.length ? JSON.parse(new TextDecoder().decode(a.body)) : undefined;
      const bodyB = b.body.length ? JSON.parse(new TextDecoder().decode(b.body)) : undefined;
      assert.deepEqual(bodyB, bodyA, `${name}: body`);
      assert.deepEqual(platformHeaders(b), platformHeaders(a), `${name}: header names`);
      assert.deepEqual(
        b.headers.get("idempotency-key"),
        a.headers.get("idempotency-key"),
        `${name}: idempotency key`,
      );
      const ca = claims(a);
      const cb = claims(b);
      assert.deepEqual(Object.keys(cb).sort(), Object.keys(ca).sort(), `${name}: claim names`);
      for (const k of ["uri", "sub", "bodyHash"]) {
        assert.deepEqual(cb[k], ca[k], `${name}: claim ${k}`);
      }
      // Both tokens verify under the platform's rules (signature, sub, uri, bodyHash, a nonce,
      // exp in the future): the SDK's with its 55-s lifetime, ours within 30 s of iat.
      for (const [who, r, maxLifetimeS] of [["the SDK's", a, 55], ["our", b, 30]] as const) {
        await verifyRequestToken(r.headers.get("authorization")!.slice(7), {
          publicKey: keys.publicKey,
          apiKey: API_KEY,
          uri: r.path + r.search,
          body: r.body,
          maxLifetimeS,
        }).catch((e) => {
          throw new Error(`${name}: ${who} token does not verify: ${e.message}`);
        });
      }
      assert.ok((cb.exp as number) - (cb.iat as number) <= 30, "our exp is within 30 s of iat");
    }
  } finally {
    await srv.close();
  }
});
