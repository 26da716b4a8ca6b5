import assert from "node:assert/strict";
import { WebhookSigner } from "../../lib/emulator/webhooks/signer.ts";
import { verifyWebhookSignatureWithKeys } from "../../lib/webhooks/signature.ts";
import { startWebhooks } from "../../lib/emulator/webhooks/start.ts";
import { Store } from "../../lib/emulator/store.ts";

Deno.test("a signature is a detached RS512 JWS with the kid, and verifies against the JWKS", async () => {
  const signer = await WebhookSigner.generate();
  const body = JSON.stringify({ id: "n1", data: { amount: "1.5" } });
  const sig = await signer.sign(body);
  const [head, empty, s] = sig.split(".");
  assert.equal(empty, "");
  assert.ok(s.length > 300);
  const header = JSON.parse(atob(head.replace(/-/g, "+").replace(/_/g, "/")));
  assert.deepEqual(header, { alg: "RS512", kid: signer.kid });
  const jwks = signer.jwks();
  assert.equal(jwks.keys.length, 1);
  assert.equal(jwks.keys[0].alg, "RS512");
  assert.equal(jwks.keys[0].kid, signer.kid);
  assert.equal("d" in jwks.keys[0], false, "the JWKS holds no private part");
  assert.deepEqual(await verifyWebhookSignatureWithKeys(body, sig, jwks), {
    ok: true,
    kid: signer.kid,
  });
  // the same key through JSON, as a receiver fetches it
  const fetched = JSON.parse(JSON.stringify(jwks));
  assert.equal(
    (await verifyWebhookSignatureWithKeys(new TextEncoder().encode(body), sig, fetched)).ok,
    true,
  );
});

Deno.test("a changed body, another key, or a malformed header is refused", async () => {
  const signer = await WebhookSigner.generate();
  const other = await WebhookSigner.generate();
  const body = '{"id":"n1"}';
  const sig = await signer.sign(body);
  assert.equal((await verifyWebhookSignatureWithKeys('{"id":"n2"}', sig, signer.jwks())).ok, false);
  const r = await verifyWebhookSignatureWithKeys(body, sig, other.jwks());
  assert.equal(r.ok, false);
  assert.match((r as { reason: string }).reason, /kid/);
  assert.equal((await verifyWebhookSignatureWithKeys(body, null, signer.jwks())).ok, false);
  assert.equal((await verifyWebhookSignatureWithKeys(body, "a.b.c", signer.jwks())).ok, false);
  assert.equal((await verifyWebhookSignatureWithKeys(body, "!!..??", signer.jwks())).ok, false);
  // a header whose kid is right but whose signature is another key's
  const forged = sig.split("..")[0] + ".." + (await other.sign(body)).split("..")[1];
  assert.equal((await verifyWebhookSignatureWithKeys(body, forged, signer.jwks())).ok, false);
});

Deno.test("a signer restored from its stored private JWK keeps its kid and signs the same", async () => {
  const signer = await WebhookSigner.generate();
  const restored = await WebhookSigner.fromPrivateJwk(
    JSON.parse(JSON.stringify(signer.toPrivateJwk())),
  );
  assert.equal(restored.kid, signer.kid);
  assert.deepEqual(restored.jwks(), signer.jwks());
  // RSASSA-PKCS1-v1_5 is deterministic
  assert.equal(await restored.sign("x"), await signer.sign("x"));
  await assert.rejects(() => WebhookSigner.fromPrivateJwk({ kty: "EC", kid: "k" }), TypeError);
});

Deno.test("signatures made at once are each the one of their own body", async () => {
  const signer = await WebhookSigner.generate();
  const bodies = Array.from({ length: 20 }, (_, i) => `{"id":"n${i}"}`);
  const together = await Promise.all(bodies.map((b) => signer.sign(b)));
  for (let i = 0; i < bodies.length; i++) {
    assert.equal(together[i], await signer.sign(bodies[i]));
    assert.equal(
      (await verifyWebhookSignatureWithKeys(bodies[i], together[i], signer.jwks())).ok,
      true,
    );
  }
});

Deno.test("a state file of an earlier version keeps its signing key (then kept in wh_meta)", async () => {
  const store = Store.open();
  const old = await WebhookSigner.generate();
  store.db.exec("CREATE TABLE wh_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  store.db.prepare("INSERT INTO wh_meta VALUES ('signing_key_jwk', ?)").run(
    JSON.stringify(old.toPrivateJwk()),
  );
  const webhooks = await startWebhooks({ store });
  try {
    assert.deepEqual(webhooks.jwks(), old.jwks());
    // kept with the emulator's other meta values from now on
    assert.equal(JSON.parse(store.getMeta("signing_key_jwk")!).kid, old.kid);
  } finally {
    await webhooks.engine.stop();
    store.close();
  }
});

Deno.test("the signing key is kept in the store: a restart on it serves the same JWKS", async () => {
  const store = Store.open();
  try {
    const first = await startWebhooks({ store });
    await first.engine.stop();
    const again = await startWebhooks({ store });
    await again.engine.stop();
    assert.deepEqual(again.jwks(), first.jwks());
  } finally {
    store.close();
  }
});
