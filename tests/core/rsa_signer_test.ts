import assert from "node:assert/strict";
import { compactVerify, decodeProtectedHeader, importJWK, jwtVerify } from "jose";
import { type RsaAlg, RsaSigner } from "../../lib/core/rsa_signer.ts";
import { OpenSslSigner } from "../../lib/core/openssl_signer.ts";
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
  Deno.test(`${alg}: OpenSSL and WebCrypto give the same bytes, and jose verifies them`, async () => {
    const { der, pub } = await keyPair(alg);
    const fast = await RsaSigner.fromPkcs8(der, alg);
    const slow = await RsaSigner.fromPkcs8(der, alg, {
      libcryptoPaths: ["/nonexistent/libcrypto.so.3"],
    });
    try {
      assert.equal(fast.mode, "unchecked");
      const verifyKey = await importJWK({ ...pub, alg }, alg);
      for (const data of INPUTS) {
        const a = await fast.sign(data);
        const b = await slow.sign(data);
        assert.equal(fast.mode, "openssl", fast.whyNotOpenSsl);
        assert.equal(slow.mode, "webcrypto");
        assert.match(slow.whyNotOpenSsl, /libcrypto not loaded.*nonexistent/);
        assert.equal(a.length, 256);
        assert.deepEqual(a, b, `${data.length} bytes`);
        assert.deepEqual(a, await fast.signWithWebCrypto(data));
        // an independent verifier: jose, over a compact JWS of this payload
        const head = toB64Url(enc.encode(JSON.stringify({ alg })));
        const payload = toB64Url(data);
        const jws = `${head}.${payload}.${
          toB64Url(await fast.sign(enc.encode(`${head}.${payload}`)))
        }`;
        const checked = await compactVerify(jws, verifyKey);
        assert.deepEqual(checked.payload, data);
      }
      // many at once (more than OpenSSL's parallel bound): each still matches its input
      const many = Array.from({ length: 10 }, (_, i) => enc.encode(`input ${i}`));
      const sigs = await Promise.all(many.map((m) => fast.sign(m)));
      for (let i = 0; i < many.length; i++) assert.deepEqual(sigs[i], await slow.sign(many[i]));
    } finally {
      fast.close();
      slow.close();
    }
  });
}

Deno.test("the shared signer starts from a JWK as from PKCS#8, and the caller's bytes are left alone", async () => {
  const { der, jwk } = await keyPair("RS512");
  const copy = new Uint8Array(der);
  const a = await RsaSigner.fromPkcs8(der, "RS512");
  const b = await RsaSigner.fromJwk(jwk, "RS512");
  try {
    assert.deepEqual(der, copy);
    assert.equal(await b.useOpenSsl(), "openssl");
    assert.deepEqual(await a.sign(enc.encode("x")), await b.sign(enc.encode("x")));
  } finally {
    a.close();
    b.close();
  }
  await assert.rejects(() => a.sign(enc.encode("x")), /closed/);
});

Deno.test("an OpenSSL signer whose signatures differ from WebCrypto's is not used", async () => {
  const { der } = await keyPair("RS256");
  const other = await keyPair("RS256");
  // OpenSSL opened on another key: a working signer whose bytes differ
  const s = await RsaSigner.fromPkcs8(der, "RS256", {
    openOpenSsl: (_der, opts) => OpenSslSigner.open(other.der, opts),
  });
  try {
    const sig = await s.sign(enc.encode("probe"));
    assert.equal(s.mode, "webcrypto");
    assert.equal(s.whyNotOpenSsl, "its signature differs from WebCrypto's");
    assert.deepEqual(sig, await s.signWithWebCrypto(enc.encode("probe")));
  } finally {
    s.close();
  }
});

Deno.test("an OpenSSL failure after the check: that signature and later ones by WebCrypto, told once", async () => {
  const { der } = await keyPair("RS256");
  let inner: OpenSslSigner | undefined;
  const told: string[] = [];
  const s = await RsaSigner.fromPkcs8(der, "RS256", {
    openOpenSsl: (d, opts) => (inner = OpenSslSigner.open(d, opts)),
    onFallback: (why) => told.push(why),
  });
  try {
    assert.equal(await s.useOpenSsl(), "openssl");
    inner!.close(); // a real failure: the key freed under it
    const data = enc.encode("after");
    assert.deepEqual(await s.sign(data), await s.signWithWebCrypto(data));
    assert.equal(s.mode, "webcrypto");
    await s.sign(data);
    assert.deepEqual(told, ["OpenSSL signer closed"]);
  } finally {
    s.close();
  }
});

Deno.test("request tokens: the same JWT through OpenSSL and WebCrypto, verified by jose", async () => {
  const { der, key, pub } = await keyPair("RS256");
  const pem = `-----BEGIN PRIVATE KEY-----\n${toBase64(der)}\n-----END PRIVATE KEY-----\n`;
  const signer = await importPrivateKeySigner(pem, "test");
  try {
    const input = {
      apiKey: "k-1",
      uri: "/v1/transactions?limit=1",
      body: '{"a":1}',
      nonce: "n-1",
      nowMs: Date.now(),
    };
    const viaSigner = await signRequestToken(signer, input);
    assert.equal(signer.mode, "openssl", signer.whyNotOpenSsl);
    const again = await signRequestToken(signer, { ...input, nonce: "n-2" }); // OpenSSL alone now
    const viaWebCrypto = await signRequestToken(key, { ...input, nonce: "n-2" });
    assert.equal(again, viaWebCrypto);
    assert.equal(decodeProtectedHeader(viaSigner).alg, "RS256");
    const { payload } = await jwtVerify(again, await importJWK({ ...pub, alg: "RS256" }, "RS256"));
    assert.equal(payload.sub, "k-1");
    assert.equal(payload.nonce, "n-2");
    const rs512 = await RsaSigner.fromPkcs8(der, "RS512");
    await assert.rejects(() => signRequestToken(rs512, input), /RS256/);
    rs512.close();
  } finally {
    signer.close();
  }
});

function toB64Url(b: Uint8Array): string {
  return toBase64(b).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
