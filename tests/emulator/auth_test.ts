/**
 * Request authentication is verified for real: each way a request can be
 * wrong is refused with 401 `{message, code}`, and a correct one passes.
 */

import assert from "node:assert/strict";
import { sha256Hex } from "../../lib/platform/mod.ts";
import {
  claimsFor,
  type Fixture,
  signClaims,
  startFixture,
  transfer,
} from "../support/emulator_fixture.ts";

async function call(
  fx: Fixture,
  path: string,
  o: { token: string; apiKey?: string; method?: string; body?: string },
): Promise<{ status: number; body: Record<string, unknown>; requestId: string | null }> {
  const res = await fetch(fx.emu.apiBaseUrl + path, {
    method: o.method ?? "GET",
    headers: {
      "X-API-Key": o.apiKey ?? fx.emu.apiKey,
      "Authorization": `Bearer ${o.token}`,
      ...(o.body !== undefined ? { "Content-Type": "application/json" } : {}),
    },
    body: o.body,
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? JSON.parse(text) : {},
    requestId: res.headers.get("x-request-id"),
  };
}

function assertRefused(
  r: { status: number; body: Record<string, unknown>; requestId: string | null },
  why: RegExp,
) {
  assert.equal(r.status, 401);
  assert.match(String(r.body.message), why);
  assert.equal(typeof r.body.message, "string");
  assert.equal(typeof r.body.code, "number");
  assert.ok(r.requestId, "X-Request-ID on the refusal");
}

Deno.test("request authentication", async (t) => {
  const fx = await startFixture();
  const path = "/v1/vault/accounts_paged?limit=2";
  try {
    await t.step("a correctly signed request passes", async () => {
      const token = await signClaims(fx.emu.privateKeyPem, await claimsFor(fx.emu.apiKey, path));
      const r = await call(fx, path, { token });
      assert.equal(r.status, 200);
    });

    await t.step('the legacy empty-body hash (of the two characters "") is accepted', async () => {
      const claims = await claimsFor(fx.emu.apiKey, path, "", { bodyHash: await sha256Hex('""') });
      const r = await call(fx, path, { token: await signClaims(fx.emu.privateKeyPem, claims) });
      assert.equal(r.status, 200);
    });

    await t.step("a wrong API key is refused", async () => {
      const other = crypto.randomUUID();
      const token = await signClaims(fx.emu.privateKeyPem, await claimsFor(other, path));
      assertRefused(await call(fx, path, { token, apiKey: other }), /API key/);
    });

    await t.step("a sub claim other than the API key is refused", async () => {
      const token = await signClaims(
        fx.emu.privateKeyPem,
        await claimsFor(fx.emu.apiKey, path, "", { sub: crypto.randomUUID() }),
      );
      assertRefused(await call(fx, path, { token }), /sub claim/);
    });

    await t.step("a token signed with another RSA key is refused", async () => {
      const pair = await crypto.subtle.generateKey(
        {
          name: "RSASSA-PKCS1-v1_5",
          hash: "SHA-256",
          modulusLength: 2048,
          publicExponent: new Uint8Array([1, 0, 1]),
        },
        true,
        ["sign", "verify"],
      ) as CryptoKeyPair;
      const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
      const pem = `-----BEGIN PRIVATE KEY-----\n${
        btoa(String.fromCharCode(...der))
      }\n-----END PRIVATE KEY-----\n`;
      const token = await signClaims(pem, await claimsFor(fx.emu.apiKey, path));
      assertRefused(await call(fx, path, { token }), /signature/);
    });

    await t.step("a tampered signature is refused", async () => {
      const token = await signClaims(fx.emu.privateKeyPem, await claimsFor(fx.emu.apiKey, path));
      const last = token.at(-2) === "A" ? "B" : "A";
      assertRefused(
        await call(fx, path, { token: token.slice(0, -2) + last + token.at(-1) }),
        /signature|JWT/,
      );
    });

    await t.step("a uri claim for another path or query is refused", async () => {
      const token = await signClaims(
        fx.emu.privateKeyPem,
        await claimsFor(fx.emu.apiKey, "/v1/vault/accounts_paged?limit=3"),
      );
      assertRefused(await call(fx, path, { token }), /uri/);
    });

    await t.step(
      "a bodyHash that is not the body's is refused, and nothing is created",
      async () => {
        const body = JSON.stringify(
          transfer(fx.emu.assetId, "0", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "0.01"),
        );
        const other = body.replace("0.01", "0.02");
        const token = await signClaims(
          fx.emu.privateKeyPem,
          await claimsFor(fx.emu.apiKey, "/v1/transactions", other),
        );
        assertRefused(
          await call(fx, "/v1/transactions", { token, method: "POST", body }),
          /bodyHash/,
        );
        const list = await fx.api<unknown[]>("GET", "/v1/transactions");
        assert.deepEqual(list.data, []);
      },
    );

    await t.step("an expired token is refused", async () => {
      const now = Math.floor(Date.now() / 1000);
      const token = await signClaims(
        fx.emu.privateKeyPem,
        await claimsFor(fx.emu.apiKey, path, "", { iat: now - 90, exp: now - 40 }),
      );
      assertRefused(await call(fx, path, { token }), /expired/);
    });

    await t.step("a token living longer than 60 s is refused", async () => {
      const now = Math.floor(Date.now() / 1000);
      const token = await signClaims(
        fx.emu.privateKeyPem,
        await claimsFor(fx.emu.apiKey, path, "", { iat: now, exp: now + 61 }),
      );
      assertRefused(await call(fx, path, { token }), /too long/);
    });

    await t.step("a replayed nonce is refused", async () => {
      const token = await signClaims(fx.emu.privateKeyPem, await claimsFor(fx.emu.apiKey, path));
      assert.equal((await call(fx, path, { token })).status, 200);
      assertRefused(await call(fx, path, { token }), /nonce/);
    });

    await t.step("a missing or malformed Authorization header is refused", async () => {
      assertRefused(await call(fx, path, { token: "not-a-jwt" }), /Authorization/);
      const res = await fetch(fx.emu.apiBaseUrl + path);
      assert.equal(res.status, 401);
      await res.body?.cancel();
    });
  } finally {
    await fx.stop();
  }
});
