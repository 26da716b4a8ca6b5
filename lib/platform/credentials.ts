/**
 * Credentials of the platform API: the API key, the RSA private key (a path or
 * the PEM text, PKCS#8 or PKCS#1) and the base URL (with or without `/v1`).
 * No message here ever contains the key material or the API key.
 *
 * @module
 */

import { concatBytes, fromBase64 } from "../core/mod.ts";
import { RsaSigner } from "../core/rsa.ts";
import { CredentialsError } from "./errors.ts";
import { rememberSecret } from "../core/redact.ts";
import { buildApiBaseUrl, NO_ADDRESS } from "./production.ts";

/** Ready-to-use credentials. */
export interface Credentials {
  /** The platform API key. */
  apiKey: string;
  /**
   * What signs request tokens (RS256): the shared signer
   * ({@linkcode loadCredentials} makes one), or a bare WebCrypto key.
   */
  privateKey: RsaSigner | CryptoKey;
  /** Origin plus any path prefix, without the trailing `/v1`. */
  baseUrl: string;
}

/**
 * Normalises a base URL: drops trailing slashes and a trailing `/v1`.
 *
 * @example
 * ```ts
 * normalizeBaseUrl("https://sandbox-api.example.io/v1/"); // "https://sandbox-api.example.io"
 * ```
 */
export function normalizeBaseUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CredentialsError(
      `Invalid --apiBaseUrl ${
        JSON.stringify(url)
      }: expected an http(s) URL such as https://sandbox-api.example.io.`,
    );
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") {
    throw new CredentialsError(
      `Invalid --apiBaseUrl ${JSON.stringify(url)}: expected an http or https URL.`,
    );
  }
  if (u.username || u.password) {
    throw new CredentialsError("Invalid --apiBaseUrl: credentials in the URL are not accepted.");
  }
  const path = u.pathname.replace(/\/+$/, "").replace(/\/v1$/, "");
  return `${u.origin}${path}`;
}

function derLength(n: number): Uint8Array {
  if (n < 0x80) return Uint8Array.of(n);
  const bytes: number[] = [];
  while (n > 0) {
    bytes.unshift(n & 0xff);
    n >>= 8;
  }
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

function der(tag: number, ...parts: Uint8Array[]): Uint8Array {
  const len = parts.reduce((a, p) => a + p.length, 0);
  return concatBytes([Uint8Array.of(tag, ...derLength(len)), ...parts]);
}

/** Wraps a PKCS#1 RSAPrivateKey in a PKCS#8 PrivateKeyInfo. */
function pkcs1ToPkcs8(pkcs1: Uint8Array): Uint8Array {
  const version = Uint8Array.of(0x02, 0x01, 0x00);
  const rsaOid = Uint8Array.of(0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01);
  const algo = der(0x30, rsaOid, Uint8Array.of(0x05, 0x00));
  return der(0x30, version, algo, der(0x04, pkcs1));
}

function pemBody(pem: string, label: string): Uint8Array | undefined {
  const re = new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END ${label}-----`);
  const m = pem.match(re);
  if (!m) return undefined;
  try {
    return fromBase64(m[1].replace(/\s+/g, ""));
  } catch {
    return undefined;
  }
}

/**
 * Imports an RSA private key from PEM text (PKCS#8 `PRIVATE KEY` or PKCS#1
 * `RSA PRIVATE KEY`) as the project's shared RSA signer
 * (`lib/core/rsa.ts`, RS256). `source` names where it came from, for
 * messages; the key text is never part of a message.
 *
 * @example
 * ```ts
 * declare const pemText: string; // "-----BEGIN PRIVATE KEY-----\n..."
 * const signer = await importPrivateKeySigner(pemText, "--privateKey");
 * ```
 */
export async function importPrivateKeySigner(pem: string, source: string): Promise<RsaSigner> {
  const pkcs8 = pemToPkcs8(pem, source);
  try {
    return await RsaSigner.fromPkcs8(pkcs8, "RS256");
  } catch {
    throw new CredentialsError(
      `The private key from ${source} could not be read as an RSA key (malformed or not RSA). Export it again as PEM.`,
    );
  } finally {
    pkcs8.fill(0);
  }
}

/** The PKCS#8 DER inside a PEM (PKCS#1 wrapped), or a {@linkcode CredentialsError}. */
function pemToPkcs8(pem: string, source: string): Uint8Array {
  if (pem.includes("ENCRYPTED PRIVATE KEY")) {
    throw new CredentialsError(
      `The private key from ${source} is encrypted; give an unencrypted PEM (e.g. openssl pkcs8 -topk8 -nocrypt).`,
    );
  }
  let pkcs8 = pemBody(pem, "PRIVATE KEY");
  if (!pkcs8) {
    const pkcs1 = pemBody(pem, "RSA PRIVATE KEY");
    if (pkcs1) pkcs8 = pkcs1ToPkcs8(pkcs1);
  }
  if (!pkcs8) {
    throw new CredentialsError(
      `The private key from ${source} is not a PEM RSA private key: expected "-----BEGIN PRIVATE KEY-----" (PKCS#8) or "-----BEGIN RSA PRIVATE KEY-----" (PKCS#1).`,
    );
  }
  return pkcs8;
}

/** The largest private key file read: a 4096-bit RSA PEM is about 3.3 KB. */
export const MAX_PRIVATE_KEY_BYTES = 64 * 1024;

/**
 * Reads a private key file as text, refusing what cannot be a key file: a
 * FIFO, a device (`/dev/zero`), a socket or a directory ("not a regular
 * file", checked before opening, so a FIFO never blocks) and a file larger
 * than {@linkcode MAX_PRIVATE_KEY_BYTES} (at most that many bytes plus one
 * are ever read, so memory stays bounded even if the file grows). Throws
 * {@linkcode CredentialsError} naming `--privateKey` and the path; other
 * file-system errors (not found, permission denied) propagate.
 *
 * @example
 * ```ts
 * const pem = await readPrivateKeyFile("./api.pem");
 * ```
 */
export async function readPrivateKeyFile(path: string): Promise<string> {
  const refuse = (why: string): never => {
    throw unreadableFile(path, why);
  };
  const info = await Deno.stat(path);
  if (info.isDirectory) refuse("it is a directory");
  if (!info.isFile) refuse("it is not a regular file (a FIFO, device or socket)");
  const file = await Deno.open(path, { read: true });
  try {
    const buf = new Uint8Array(MAX_PRIVATE_KEY_BYTES + 1);
    let n = 0;
    while (n < buf.length) {
      const got = await file.read(buf.subarray(n));
      if (got === null) break;
      n += got;
    }
    if (n > MAX_PRIVATE_KEY_BYTES) {
      refuse(`it is larger than ${MAX_PRIVATE_KEY_BYTES / 1024} KiB, too large for a PEM key`);
    }
    return new TextDecoder().decode(buf.subarray(0, n));
  } finally {
    file.close();
  }
}

/** Where the pieces of {@linkcode loadCredentials} come from. */
export interface CredentialInput {
  /** The platform API key. */
  apiKey?: string;
  /** A file path, or the PEM text itself. */
  privateKey?: string;
  /** Base URL; default the production address the build carries (none: an error). */
  apiBaseUrl?: string;
  /** Reads the key file as text; default {@linkcode readPrivateKeyFile} (bounded, regular files only). */
  readTextFile?: (path: string) => Promise<string>;
}

/** Longest API key accepted: 512 characters (the platform's are UUIDs). */
export const MAX_API_KEY_LENGTH = 512;

/**
 * Refuses an API key that cannot be one (a {@linkcode CredentialsError}, exit
 * 2, before any request): an API key is one word of visible ASCII of at most
 * {@linkcode MAX_API_KEY_LENGTH} characters. The message says what is wrong
 * and never repeats any part of the key (a key with a newline would otherwise
 * end up in an "invalid header value" error, retried as a network error).
 */
function checkApiKey(apiKey: string): void {
  let why: string | undefined;
  if (apiKey.length > MAX_API_KEY_LENGTH) {
    why = `it is longer than ${MAX_API_KEY_LENGTH} characters`;
  } else {
    for (let i = 0; i < apiKey.length && why === undefined; i++) {
      const c = apiKey.charCodeAt(i);
      if (c === 32 || c === 9) why = `character ${i + 1} is a space or a tab`;
      else if (c < 32 || c === 127) why = `character ${i + 1} is a control character (a newline?)`;
      else if (c > 126) why = `character ${i + 1} is not ASCII`;
    }
  }
  if (why !== undefined) {
    throw new CredentialsError(
      `The API key (--apiKey or SERVICE_API_KEY) is malformed: ${why}. An API key is one word of visible ASCII (a UUID); check for a stray newline, space or quote.`,
    );
  }
}

/**
 * Checks that `path` holds a readable, unencrypted RSA private key, as every command will load
 * it (`service config set` before it stores the path): the errors of
 * {@linkcode loadCredentials}, naming the file, never the key.
 *
 * @example
 * ```ts
 * await checkPrivateKeyFile("./api.pem");
 * ```
 */
export async function checkPrivateKeyFile(path: string): Promise<void> {
  await readKey(path, readPrivateKeyFile);
}

/** The PEM text of `value` (a path, or the text itself) and what it is called in messages. */
async function readKey(
  value: string,
  read: (path: string) => Promise<string>,
): Promise<{ pem: string; signer: RsaSigner }> {
  let pem: string;
  let source: string;
  if (value.includes("-----BEGIN")) {
    pem = value;
    source = "--privateKey (PEM text)";
  } else {
    source = `the file ${JSON.stringify(value)}`;
    try {
      pem = await read(value);
    } catch (e) {
      if (e instanceof CredentialsError) throw e;
      const why = e instanceof Deno.errors.NotFound
        ? "no such file"
        : e instanceof Deno.errors.PermissionDenied
        ? "permission denied"
        : e instanceof Deno.errors.IsADirectory
        ? "it is a directory"
        : "it cannot be read";
      throw unreadableFile(value, why);
    }
  }
  return { pem, signer: await importPrivateKeySigner(pem, source) };
}

function unreadableFile(path: string, why: string): CredentialsError {
  return new CredentialsError(
    `Cannot read the private key file ${
      JSON.stringify(path)
    }: ${why}. Give --privateKey a PEM file path or the PEM text.`,
  );
}

/**
 * Checks and loads the credentials. Missing pieces and unreadable or
 * malformed keys throw {@linkcode CredentialsError} naming the flag and its
 * environment variable, never the secret.
 *
 * @example
 * ```ts
 * declare const apiKey: string;
 * const creds = await loadCredentials({ apiKey, privateKey: "./api.pem", apiBaseUrl: "http://127.0.0.1:8080" });
 * ```
 */
export async function loadCredentials(input: CredentialInput): Promise<Credentials> {
  const missing: string[] = [];
  if (!input.apiKey) missing.push("--apiKey (or SERVICE_API_KEY)");
  if (!input.privateKey) missing.push("--privateKey (or SERVICE_API_PRIVATE_KEY_PATH)");
  if (missing.length) {
    throw new CredentialsError(
      `Missing credentials: ${
        missing.join(" and ")
      }. Give the API key and the path of its RSA private key.`,
    );
  }
  checkApiKey(input.apiKey!);
  const address = input.apiBaseUrl || buildApiBaseUrl();
  if (address) normalizeBaseUrl(address); // a malformed address reports before the key is read
  const { pem, signer: privateKey } = await readKey(
    input.privateKey!,
    input.readTextFile ?? readPrivateKeyFile,
  );
  // Both are redacted by value wherever the platform's words are shown (lib/core/redact.ts).
  rememberSecret(input.apiKey);
  rememberSecret(pem);
  // No address of our own: the user's, else the production address this build carries;
  // checked after the key so that a key's mistake reports first, and before any request.
  if (!address) throw new CredentialsError(NO_ADDRESS);
  return { apiKey: input.apiKey!, privateKey, baseUrl: normalizeBaseUrl(address) };
}
