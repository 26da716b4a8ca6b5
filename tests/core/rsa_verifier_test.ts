import assert from "node:assert/strict";
import { CompactSign, importJWK } from "jose";
import { RsaVerifier } from "../../lib/core/rsa.ts";
import { fromBase64Url } from "../../lib/core/encoding.ts";

const enc = new TextEncoder();

for (const alg of ["RS256", "RS512"] as const) {
  Deno.test(`${alg}: the verifier accepts jose's signatures and refuses altered ones`, async () => {
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
    const verifier = await RsaVerifier.fromSpki(spki, alg);
    // signatures made by an independent signer (jose)
    const jws = await new CompactSign(enc.encode('{"uri":"/v1/x"}'))
      .setProtectedHeader({ alg })
      .sign(joseKey);
    const [h, p, s] = jws.split(".");
    const data = enc.encode(`${h}.${p}`);
    const sig = fromBase64Url(s);
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
      assert.equal(await verifier.verify(sg, d), want);
    }
    // another key's signature over the same data is refused
    const other = await crypto.subtle.generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        hash: alg === "RS256" ? "SHA-256" : "SHA-512",
        modulusLength: 2048,
        publicExponent: new Uint8Array([1, 0, 1]),
      },
      true,
      ["sign", "verify"],
    ) as CryptoKeyPair;
    const foreign = new Uint8Array(
      await crypto.subtle.sign("RSASSA-PKCS1-v1_5", other.privateKey, data),
    );
    assert.equal(await verifier.verify(foreign, data), false);
  });
}
