import assert from "node:assert/strict";
import { CompactSign, importJWK } from "jose";
import { RsaVerifier } from "../../lib/core/rsa_verifier.ts";
import { fromBase64Url } from "../../lib/core/encoding.ts";

const enc = new TextEncoder();

for (const alg of ["RS256", "RS512"] as const) {
  Deno.test(`${alg}: OpenSSL and WebCrypto agree on jose's signatures, good and bad`, async () => {
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
    const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pair.publicKey));
    const joseKey = await importJWK(
      { ...(await crypto.subtle.exportKey("jwk", pair.privateKey)), alg },
      alg,
    );
    const fast = await RsaVerifier.fromSpki(spki, alg);
    const slow = await RsaVerifier.fromSpki(spki, alg, { libcryptoPaths: ["/nonexistent/x.so"] });
    try {
      // signatures made by an independent signer (jose)
      const jws = await new CompactSign(enc.encode('{"uri":"/v1/x"}'))
        .setProtectedHeader({ alg })
        .sign(joseKey);
      const [h, p, s] = jws.split(".");
      const data = enc.encode(`${h}.${p}`);
      const sig = fromBase64Url(s);
      assert.equal(fast.mode, "unchecked");
      assert.equal(await fast.verify(sig, data), true);
      assert.equal(fast.mode, "openssl", fast.whyNotOpenSsl);
      assert.equal(await slow.verify(sig, data), true);
      assert.equal(slow.mode, "webcrypto");
      assert.match(slow.whyNotOpenSsl, /libcrypto not loaded/);
      const flipped = new Uint8Array(sig);
      flipped[10] ^= 1;
      const cases: [Uint8Array, Uint8Array, boolean][] = [
        [sig, data, true],
        [sig, enc.encode(`${h}.${p}x`), false],
        [flipped, data, false],
        [sig.subarray(0, 255), data, false],
        [new Uint8Array(0), data, false],
        [new Uint8Array(256), data, false],
      ];
      for (const [sg, d, want] of cases) {
        assert.equal(await fast.verify(sg, d), want);
        assert.equal(await fast.verifyWithWebCrypto(sg, d), want);
        assert.equal(await slow.verify(sg, d), want);
      }
      assert.equal(fast.mode, "openssl");
    } finally {
      fast.close();
      slow.close();
    }
  });
}
