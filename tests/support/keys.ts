/**
 * Throw-away RSA key pairs for tests (made fresh each run, never committed),
 * and a JWT verifier written from the platform's rules, used by test servers.
 *
 * @module
 */

import { generateKeyPairSync } from "node:crypto";
import { sha256Hex } from "../../lib/platform/mod.ts";

/** A fresh RSA key pair in the PEM forms the platform accepts. */
export interface TestKeys {
  pkcs8Pem: string;
  pkcs1Pem: string;
  publicKey: CryptoKey;
}

/** Generates a 2048-bit RSA key pair. */
export async function makeTestKeys(): Promise<TestKeys> {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pkcs8Pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const pkcs1Pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  const spki = publicKey.export({ type: "spki", format: "der" });
  const key = await crypto.subtle.importKey(
    "spki",
    new Uint8Array(spki),
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    false,
    ["verify"],
  );
  return { pkcs8Pem, pkcs1Pem, publicKey: key };
}

function b64urlDecode(s: string): Uint8Array {
  const b = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4));
  return Uint8Array.from(b, (c) => c.charCodeAt(0));
}

/** Decoded, signature-checked JWT parts. */
export interface VerifiedToken {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
}

/**
 * Verifies a request token as the platform does: RS256 signature, `sub`,
 * `uri` (path + query), `bodyHash` (of the received bytes), `exp` in the future
 * and within `maxLifetimeS` (30) s of `iat`. Throws with the reason.
 */
export async function verifyRequestToken(
  token: string,
  expect: {
    publicKey: CryptoKey;
    apiKey: string;
    uri: string;
    body: Uint8Array;
    nowMs?: number;
    /** Longest `exp - iat` accepted, in seconds; default 30 (ours; the official SDK uses 55). */
    maxLifetimeS?: number;
  },
): Promise<VerifiedToken> {
  const parts = token.split(".");
  if (parts.length !== 3) throw new Error("not a JWT");
  const header = JSON.parse(new TextDecoder().decode(b64urlDecode(parts[0])));
  const claims = JSON.parse(new TextDecoder().decode(b64urlDecode(parts[1])));
  if (header.alg !== "RS256") throw new Error(`alg ${header.alg}`);
  const ok = await crypto.subtle.verify(
    { name: "RSASSA-PKCS1-v1_5" },
    expect.publicKey,
    b64urlDecode(parts[2]) as BufferSource,
    new TextEncoder().encode(`${parts[0]}.${parts[1]}`) as BufferSource,
  );
  if (!ok) throw new Error("bad signature");
  if (claims.sub !== expect.apiKey) throw new Error("sub mismatch");
  if (claims.uri !== expect.uri) throw new Error(`uri mismatch: ${claims.uri} != ${expect.uri}`);
  if (claims.bodyHash !== await sha256Hex(expect.body)) throw new Error("bodyHash mismatch");
  const now = Math.floor((expect.nowMs ?? Date.now()) / 1000);
  if (typeof claims.exp !== "number" || claims.exp < now) throw new Error("expired");
  const maxLifetimeS = expect.maxLifetimeS ?? 30;
  if (typeof claims.iat !== "number" || claims.exp - claims.iat > maxLifetimeS) {
    throw new Error(`exp more than ${maxLifetimeS} s after iat`);
  }
  if (typeof claims.nonce !== "string" || claims.nonce.length < 8) throw new Error("no nonce");
  return { header, claims };
}
