import assert from "node:assert/strict";
import { compactVerify, decodeProtectedHeader, importJWK, jwtVerify } from "jose";
import { type RsaAlg, RsaSigner } from "../../lib/core/rsa.ts";
import { signRequestToken } from "../../lib/platform/jwt.ts";
import { importPrivateKeySigner } from "../../lib/platform/credentials.ts";
import { toBase64 } from "../../lib/core/encoding.ts";

const enc = new TextEncoder();

async function keyPair(alg: RsaAlg) {
  const pair = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      hash: alg === "RS256" ? "SHA-256" : "SHA-512",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
    },
    true,
    ["sign", "verify"],
  ) as CryptoKeyPair;
  const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey);
  const pub = await crypto.subtle.exportKey("jwk", pair.publicKey);
  return { der, jwk, pub, key: pair.privateKey };
}

const INPUTS = [
  new Uint8Array(0),
  enc.encode("eyJhbGciOiJSUzI1NiJ9.eyJ1cmkiOiIvdjEvdmF1bHQvYWNjb3VudHMifQ"),
  enc.encode("émulateur ✓ 🚀"),
  new Uint8Array(300_000).map((_, i) => i * 7),
];

for (const alg of ["RS256", "RS512"] as const) {
  Deno.test(`${alg}: the signer's bytes are WebCrypto's for the same key, and jose verifies them`, async () => {
    const { der, pub, key } = await keyPair(alg);
    const signer = await RsaSigner.fromPkcs8(der, alg);
    const verifyKey = await importJWK({ ...pub, alg }, alg);
    for (const data of INPUTS) {
      const a = await signer.sign(data);
      assert.equal(a.length, 256);
      const reference = new Uint8Array(
        await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, data as BufferSource),
      );
      assert.deepEqual(a, reference, `${data.length} bytes`);
      // an independent verifier: jose, over a compact JWS of this payload
      const head = toB64Url(enc.encode(JSON.stringify({ alg })));
      const payload = toB64Url(data);
      const jws = `${head}.${payload}.${
        toB64Url(await signer.sign(enc.encode(`${head}.${payload}`)))
      }`;
      const checked = await compactVerify(jws, verifyKey);
      assert.deepEqual(checked.payload, data);
    }
    // many at once: each still matches its own input
    const many = Array.from({ length: 10 }, (_, i) => enc.encode(`input ${i}`));
    const sigs = await Promise.all(many.map((m) => signer.sign(m)));
    for (let i = 0; i < many.length; i++) assert.deepEqual(sigs[i], await signer.sign(many[i]));
  });
}

Deno.test("the shared signer starts from a JWK as from PKCS#8, and the caller's bytes are left alone", async () => {
  const { der, jwk } = await keyPair("RS512");
  const copy = new Uint8Array(der);
  const a = await RsaSigner.fromPkcs8(der, "RS512");
  const b = await RsaSigner.fromJwk(jwk, "RS512");
  assert.deepEqual(der, copy);
  assert.deepEqual(await a.sign(enc.encode("x")), await b.sign(enc.encode("x")));
  await assert.rejects(() => RsaSigner.fromPkcs8(enc.encode("not a key"), "RS256"));
});

Deno.test("request tokens: the signer's JWT is a bare WebCrypto key's, verified by jose", async () => {
  const { der, key, pub } = await keyPair("RS256");
  const pem = `-----BEGIN PRIVATE KEY-----\n${toBase64(der)}\n-----END PRIVATE KEY-----\n`;
  const signer = await importPrivateKeySigner(pem, "test");
  const input = {
    apiKey: "k-1",
    uri: "/v1/transactions?limit=1",
    body: '{"a":1}',
    nonce: "n-1",
    nowMs: Date.now(),
  };
  const viaSigner = await signRequestToken(signer, input);
  const viaWebCrypto = await signRequestToken(key, input);
  assert.equal(viaSigner, viaWebCrypto);
  assert.equal(decodeProtectedHeader(viaSigner).alg, "RS256");
  const { payload } = await jwtVerify(
    viaSigner,
    await importJWK({ ...pub, alg: "RS256" }, "RS256"),
  );
  assert.equal(payload.sub, "k-1");
  assert.equal(payload.nonce, "n-1");
  const rs512 = await RsaSigner.fromPkcs8(der, "RS512");
  await assert.rejects(() => signRequestToken(rs512, input), /RS256/);
});

function toB64Url(b: Uint8Array): string {
  return toBase64(b).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
