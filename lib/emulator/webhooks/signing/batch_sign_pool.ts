/**
 * Webhook signatures in batches on OpenSSL worker threads
 * ({@linkcode ./batch_sign_worker.ts}). Bodies to sign wait in one queue;
 * at the end of the current task (a microtask) they go out in batches, each
 * to the least loaded worker, which signs them with synchronous OpenSSL
 * calls and answers with every signature of the batch in one message. A
 * worker holds at most {@linkcode MAX_BATCHES_PER_WORKER} batches, so it has
 * the next one at hand when it finishes one while the event loop is busy,
 * and the rest stay queued here for whichever worker frees first.
 *
 * Compared with a `nonblocking` foreign call per signature, this makes one
 * thread hand-off per batch instead of one per signature.
 *
 * @module
 */

import type { BatchMessage, KeyMessage, WorkerAnswer } from "./batch_sign_worker.ts";

/** Signatures in one batch at most. */
export const MAX_BATCH = 32;
/** Batches handed to one worker at a time at most. */
export const MAX_BATCHES_PER_WORKER = 2;

interface Item {
  body: string | Uint8Array;
  resolve: (sig: string) => void;
  reject: (e: Error) => void;
}

interface Lane {
  worker: Worker;
  batches: number;
}

/** Options of {@linkcode BatchSignPool.start}. */
export interface BatchSignPoolOptions {
  /** Worker threads; default the number of CPU cores. */
  size?: number;
  /** libcrypto names or paths tried in order (in each worker); default the OS's usual ones. */
  paths?: readonly string[];
}

/**
 * A pool of OpenSSL signing workers for one RS512 key; see the module doc.
 *
 * @example
 * ```ts
 * const pool = await BatchSignPool.start(pkcs8Der, toBase64Url('{"alg":"RS512","kid":"k"}'));
 * const b64sig = await pool.sign('{"id":"n1"}'); // over `<header>.<BASE64URL(body)>`
 * pool.close();
 * ```
 */
export class BatchSignPool {
  #lanes: Lane[] = [];
  #queue: Item[] = [];
  #batches = new Map<number, { lane: Lane; items: Item[] }>();
  #nextId = 0;
  #scheduled = false;
  #failure: Error | undefined;
  /** The libcrypto the workers loaded. */
  library = "";

  private constructor() {}

  /**
   * Starts the workers, each holding the key (PKCS#8 DER; the caller's bytes
   * are not changed). Rejects, with every worker stopped, when one cannot
   * start or load OpenSSL and the key.
   */
  static async start(
    pkcs8: Uint8Array,
    protectedHeader: string,
    opts: BatchSignPoolOptions = {},
  ): Promise<BatchSignPool> {
    const pool = new BatchSignPool();
    const size = Math.max(1, Math.floor(opts.size ?? navigator.hardwareConcurrency ?? 1));
    const url = new URL("./batch_sign_worker.ts", import.meta.url);
    try {
      await Promise.all(
        Array.from({ length: size }, () => pool.#startOne(url, pkcs8, protectedHeader, opts.paths)),
      );
    } catch (e) {
      pool.close();
      throw e;
    }
    return pool;
  }

  #startOne(
    url: URL,
    pkcs8: Uint8Array,
    header: string,
    paths: readonly string[] | undefined,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      const lane: Lane = { worker: new Worker(url, { type: "module" }), batches: 0 };
      this.#lanes.push(lane);
      let ready = false;
      lane.worker.onerror = (e) => {
        e.preventDefault();
        const err = new Error(`signing worker failed: ${e.message}`);
        if (!ready) reject(err);
        this.#fail(err);
      };
      lane.worker.onmessage = (e: MessageEvent<WorkerAnswer>) => {
        const m = e.data;
        if ("type" in m) {
          if (m.type === "ready") {
            ready = true;
            this.library = m.library;
            resolve();
          } else reject(new Error(m.error));
          return;
        }
        this.#answered(m);
      };
      const key: KeyMessage = { type: "key", pkcs8: new Uint8Array(pkcs8), header, paths };
      lane.worker.postMessage(key, [key.pkcs8.buffer as ArrayBuffer]);
    });
  }

  /** Signs `body` (a string as its UTF-8 bytes); resolves to the base64url signature. */
  sign(body: string | Uint8Array): Promise<string> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#queue.push({ body, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        queueMicrotask(() => {
          this.#scheduled = false;
          this.#dispatch();
        });
      }
    });
  }

  /** Stops the workers; signatures not yet made reject. */
  close(): void {
    this.#fail(new Error("signing pool closed"));
  }

  #dispatch(): void {
    while (this.#queue.length) {
      let lane: Lane | undefined;
      let free = 0;
      for (const l of this.#lanes) {
        if (l.batches >= MAX_BATCHES_PER_WORKER) continue;
        free++;
        if (!lane || l.batches < lane.batches) lane = l;
      }
      if (!lane) return; // every worker has its fill: the next answer dispatches again
      const n = Math.min(MAX_BATCH, Math.ceil(this.#queue.length / free));
      const items = this.#queue.splice(0, n);
      const id = this.#nextId++;
      this.#batches.set(id, { lane, items });
      lane.batches++;
      const msg: BatchMessage = { id, bodies: items.map((i) => i.body) };
      lane.worker.postMessage(msg);
    }
  }

  #answered(m: { id: number; sigs: string[] } | { id: number; error: string }): void {
    const batch = this.#batches.get(m.id);
    if (!batch) return;
    this.#batches.delete(m.id);
    batch.lane.batches--;
    if ("sigs" in m) batch.items.forEach((item, i) => item.resolve(m.sigs[i]));
    else {
      const err = new Error(m.error);
      for (const item of batch.items) item.reject(err);
    }
    this.#dispatch();
  }

  /** Stops every worker and rejects every waiting signature with `err` (now and later). */
  #fail(err: Error): void {
    if (this.#failure) return;
    this.#failure = err;
    for (const l of this.#lanes) l.worker.terminate();
    for (const b of this.#batches.values()) for (const item of b.items) item.reject(err);
    this.#batches.clear();
    for (const item of this.#queue) item.reject(err);
    this.#queue = [];
  }
}
