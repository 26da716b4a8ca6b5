/**
 * RSA signing off the main thread. Deno's WebCrypto signs on the calling
 * thread (an RS512 signature with a 2048-bit key costs 1–2 ms of CPU), which
 * would stall the emulator's HTTP server and delivery loop under load. A few
 * workers hold the private key and sign; the main thread only posts bodies.
 *
 * The worker's code is inline (a `data:` URL) so that it needs no file next
 * to a compiled binary. For that reason it keeps its own four-line base64url
 * encoder: a worker started from a `data:` URL cannot import
 * `lib/core/encoding.ts`, the one the rest of the emulator uses.
 *
 * @module
 */

import { toBase64 } from "../../../core/mod.ts";

const WORKER_SOURCE = `
let key;
const enc = new TextEncoder();
function b64url(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
}
self.onmessage = async (e) => {
  const m = e.data;
  if (m.type === "key") {
    key = await crypto.subtle.importKey("jwk", m.jwk, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-512" }, false, ["sign"]);
    self.postMessage({ type: "ready" });
    return;
  }
  try {
    const sig = new Uint8Array(await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, enc.encode(m.input)));
    self.postMessage({ id: m.id, sig: b64url(sig) });
  } catch (err) {
    self.postMessage({ id: m.id, error: String(err) });
  }
};
`;

interface Pending {
  resolve: (sig: string) => void;
  reject: (e: Error) => void;
}

/**
 * A pool of signing workers for one private key.
 *
 * @example
 * ```ts
 * const pool = await SignPool.start(privateJwk, 2);
 * const b64sig = await pool.sign("header.payload");
 * pool.close();
 * ```
 */
export class SignPool {
  #workers: Worker[] = [];
  #load: number[] = [];
  #pending = new Map<number, Pending & { w: number }>();
  #next = 0;

  private constructor() {}

  /** Starts `size` workers holding the key; rejects when workers cannot start. */
  static async start(privateJwk: JsonWebKey, size: number): Promise<SignPool> {
    const pool = new SignPool();
    const url = `data:application/javascript;base64,${toBase64(WORKER_SOURCE)}`;
    const jwk = { ...privateJwk };
    delete (jwk as { kid?: string }).kid;
    jwk.alg = "RS512";
    jwk.key_ops = ["sign"];
    await Promise.all(
      Array.from({ length: size }, (_, i) =>
        new Promise<void>((resolve, reject) => {
          const w = new Worker(url, { type: "module" });
          pool.#workers.push(w);
          pool.#load.push(0);
          w.onerror = (e) => {
            e.preventDefault();
            reject(new Error(`signing worker failed: ${e.message}`));
            for (const [id, p] of pool.#pending) {
              if (p.w === i) {
                pool.#pending.delete(id);
                p.reject(new Error(`signing worker failed: ${e.message}`));
              }
            }
          };
          w.onmessage = (e) => {
            const m = e.data;
            if (m.type === "ready") return resolve();
            const p = pool.#pending.get(m.id);
            if (!p) return;
            pool.#pending.delete(m.id);
            pool.#load[p.w]--;
            if (m.error) p.reject(new Error(m.error));
            else p.resolve(m.sig);
          };
          w.postMessage({ type: "key", jwk });
        })),
    );
    return pool;
  }

  /** Signs the ASCII signing input; resolves to the base64url signature. */
  sign(input: string): Promise<string> {
    let w = 0;
    for (let i = 1; i < this.#load.length; i++) if (this.#load[i] < this.#load[w]) w = i;
    const id = this.#next++;
    this.#load[w]++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, w });
      this.#workers[w].postMessage({ id, input });
    });
  }

  /** Stops the workers; pending signatures reject. */
  close(): void {
    for (const w of this.#workers) w.terminate();
    for (const p of this.#pending.values()) p.reject(new Error("signing pool closed"));
    this.#pending.clear();
  }
}
