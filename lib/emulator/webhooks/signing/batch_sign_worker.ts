/**
 * The worker thread of {@linkcode ./batch_sign_pool.ts}: it holds the
 * webhook signing key inside OpenSSL (`lib/core/openssl_signer.ts`, the one
 * binding) and signs whole batches of bodies with synchronous foreign calls,
 * one message in and one message out per batch (no hop to Deno's blocking
 * thread pool per signature). For each body it makes the JWS signing input
 * (`BASE64URL(header) "." BASE64URL(body)`) and returns the signature in
 * base64url, so the event loop only joins strings.
 *
 * Started by URL relative to its pool (`new URL("./batch_sign_worker.ts",
 * import.meta.url)`): `scripts/bundle.ts` bundles it beside the program.
 *
 * Messages in: `{ type: "key", pkcs8, header, paths? }` once (the key bytes
 * are wiped after use), then `{ id, bodies }`. Out: `{ type: "ready",
 * library }` or `{ type: "failed", error }`, then `{ id, sigs }` or
 * `{ id, error }` per batch.
 *
 * @module
 */

import { firstLine } from "../../../core/openssl_library.ts";
import { OpenSslSigner } from "../../../core/openssl_signer.ts";
import { toBase64Url } from "../../../core/encoding.ts";

/** The first message: the key and the protected header of every signature. */
export interface KeyMessage {
  /** Always `"key"`. */
  type: "key";
  /** The private key, PKCS#8 DER (wiped here once OpenSSL has read it). */
  pkcs8: Uint8Array;
  /** `BASE64URL(protected header)`, the signing input's first part. */
  header: string;
  /** libcrypto names or paths tried in order; default the OS's usual ones. */
  paths?: readonly string[];
}

/** A batch to sign. */
export interface BatchMessage {
  /** The batch's id, echoed in the answer. */
  id: number;
  /** The raw bodies (a string is signed as its UTF-8 bytes). */
  bodies: (string | Uint8Array)[];
}

/** What the worker answers. */
export type WorkerAnswer =
  | { type: "ready"; library: string }
  | { type: "failed"; error: string }
  | { id: number; sigs: string[] }
  | { id: number; error: string };

const enc = new TextEncoder();
let signer: OpenSslSigner | undefined;
let header = "";

function onKey(m: KeyMessage): WorkerAnswer {
  try {
    signer = OpenSslSigner.open(m.pkcs8, { paths: m.paths, hash: "SHA-512", parallel: 1 });
    header = m.header;
    return { type: "ready", library: signer.library };
  } catch (e) {
    return { type: "failed", error: firstLine(e) };
  } finally {
    m.pkcs8.fill(0);
  }
}

function onBatch(m: BatchMessage): WorkerAnswer {
  if (!signer) return { id: m.id, error: "no key" };
  try {
    const sigs = new Array<string>(m.bodies.length);
    for (let i = 0; i < m.bodies.length; i++) {
      const input = enc.encode(`${header}.${toBase64Url(m.bodies[i])}`);
      sigs[i] = toBase64Url(signer.signSync(input));
    }
    return { id: m.id, sigs };
  } catch (e) {
    return { id: m.id, error: firstLine(e) };
  }
}

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<KeyMessage | BatchMessage>) => void) | null;
  postMessage(m: WorkerAnswer): void;
};
scope.onmessage = (e) => {
  const m = e.data;
  scope.postMessage("type" in m && m.type === "key" ? onKey(m) : onBatch(m as BatchMessage));
};
