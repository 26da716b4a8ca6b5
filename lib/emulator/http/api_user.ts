/**
 * The emulator's API user: an API key (UUID) and an RSA 2048 key pair made
 * with WebCrypto. The private key is written as PKCS#8 PEM to `api.pem`
 * (mode 0600) in a private directory (mode 0700); the public key verifies
 * request tokens. With a state file the same user is loaded again on restart,
 * so clients keep working.
 *
 * Why the private key is kept in the database: the README promises that a
 * restart with the same `--state` keeps the same API user (same key, same
 * PEM), so the key must be stored somewhere, and the state file is a secret
 * anyway: it already holds the API key and the webhook signing key, and
 * anyone who can read it can act as the API user without the PEM (the
 * emulator's admin endpoint takes the API key alone). Moving the PEM to a
 * second file would add a second secret to guard without making the first
 * one public. So the whole state is private instead: the database and its
 * WAL and shared-memory files are 0600 (see `../store.ts`), the key
 * directory 0700 and `api.pem` 0600, whatever the umask.
 *
 * @module
 */

import { RsaVerifier } from "../../core/rsa_verifier.ts";

import { makePrivate, type Store } from "../store.ts";

/** The API user the emulator accepts. */
export interface ApiUser {
  /** The API key (a UUID). */
  apiKey: string;
  /** Verifies RS256 request tokens (the shared verifier, `lib/core/rsa_verifier.ts`). */
  publicKey: RsaVerifier;
  /** The private key, PKCS#8 PEM (never logged). */
  privateKeyPem: string;
  /** Where the PEM was written. */
  privateKeyPath: string;
}

interface Stored {
  apiKey: string;
  privateKeyPem: string;
  publicKeySpki: string;
}

function b64(bytes: ArrayBuffer): string {
  const u = new Uint8Array(bytes);
  let s = "";
  for (let i = 0; i < u.length; i += 0x8000) s += String.fromCharCode(...u.subarray(i, i + 0x8000));
  return btoa(s);
}

function unb64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

const ALGO = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;

async function generate(uuid: () => string): Promise<Stored> {
  const pair = await crypto.subtle.generateKey(
    { ...ALGO, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
    true,
    ["sign", "verify"],
  ) as CryptoKeyPair;
  const pkcs8 = b64(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const spki = b64(await crypto.subtle.exportKey("spki", pair.publicKey));
  const lines = pkcs8.match(/.{1,64}/g) ?? [];
  const pem = `-----BEGIN PRIVATE KEY-----\n${lines.join("\n")}\n-----END PRIVATE KEY-----\n`;
  return { apiKey: uuid(), privateKeyPem: pem, publicKeySpki: spki };
}

/**
 * Loads the API user from the store, or creates and stores a new one, and
 * writes its private key to `<dir>/api.pem` (0600; `dir` is created 0700).
 *
 * @example
 * ```ts
 * import { Store } from "../store.ts";
 * const store = Store.open();
 * const user = await ensureApiUser(store, await Deno.makeTempDir());
 * ```
 */
export async function ensureApiUser(
  store: Store,
  dir: string,
  uuid: () => string = () => crypto.randomUUID(),
): Promise<ApiUser> {
  const existing = store.getMeta("api_user");
  let stored: Stored;
  if (existing) stored = JSON.parse(existing) as Stored;
  else {
    stored = await generate(uuid);
    store.setMeta("api_user", JSON.stringify(stored));
  }
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  if (Deno.build.os !== "windows") await Deno.chmod(dir, 0o700);
  const path = `${dir.replace(/\/+$/, "")}/api.pem`;
  // private before the key is written into it (an existing file may have had another mode)
  makePrivate(path);
  await Deno.writeTextFile(path, stored.privateKeyPem);
  const publicKey = await RsaVerifier.fromSpki(unb64(stored.publicKeySpki), "RS256");
  return {
    apiKey: stored.apiKey,
    publicKey,
    privateKeyPem: stored.privateKeyPem,
    privateKeyPath: path,
  };
}
