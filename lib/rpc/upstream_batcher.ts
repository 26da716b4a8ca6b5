/**
 * Batch-when-busy for pass-through requests: up to `maxInFlight` single
 * requests go to the node alone (the envelope rebuilt with the bridge's id,
 * the caller's id put back on the answer: `protocol.ts`); requests that
 * arrive while that many are in flight wait, and the next free slot carries
 * all of them as one
 * JSON-RPC batch (ids rewritten on the way up, restored on the way back).
 * Under light load nothing changes (no added latency); under heavy load the
 * node sees a few large requests instead of many small ones, which saves the
 * per-request cost on both sides (measured in `scripts/bench/rpc_passthrough.ts`).
 *
 * @module
 */

import {
  answerFrom,
  answerText,
  type RpcRequest,
  UPSTREAM_ID,
  upstreamRequest,
  upstreamText,
} from "./protocol.ts";
import type { Upstream } from "./upstream.ts";

type Waiting = Omit<PromiseWithResolvers<string>, "promise"> & { request: RpcRequest };

/** The largest batch sent: 200 requests. */
const MAX_BATCH = 200;

/** Options of {@linkcode UpstreamBatcher}. */
export interface BatcherOptions {
  /** Requests sent alone before others wait to be batched; default 1. */
  maxInFlight?: number;
  /**
   * Longest a request waits for a free slot before it is sent anyway (so a
   * slow request in flight never holds the others back); default 20 ms.
   */
  maxWaitMs?: number;
}

/** Sends single pass-through requests, batching them when the node is busy. */
export class UpstreamBatcher {
  readonly #upstream: Upstream;
  readonly #max: number;
  readonly #maxWaitMs: number;
  #inFlight = 0;
  #armed = false;
  /** When the oldest waiting request was queued (ms, monotonic). */
  #queuedAt = 0;
  readonly #queue: Waiting[] = [];
  /** Set when the node refused a batch: then everything goes alone. */
  #noBatches = false;

  /** Creates a batcher in front of `upstream`. */
  constructor(upstream: Upstream, options: BatcherOptions = {}) {
    this.#upstream = upstream;
    this.#max = options.maxInFlight ?? 1;
    this.#maxWaitMs = options.maxWaitMs ?? 20;
  }

  /**
   * Answers one request (not a notification): resolves with the text of the
   * client's answer, carrying the request's own id (see `answerText`).
   */
  send(request: RpcRequest): Promise<string> {
    if (this.#inFlight < this.#max || this.#noBatches) return this.#single(request);
    return new Promise((resolve, reject) => {
      if (this.#queue.length === 0) this.#queuedAt = performance.now();
      this.#queue.push({ request, resolve, reject });
      this.#arm(this.#maxWaitMs);
    });
  }

  /**
   * The wait bound: one timer while requests wait, not one per batch (under
   * load a batch leaves every few hundred µs). When it fires it sends what has
   * waited `maxWaitMs`, else waits again for the rest of the oldest request's
   * bound. An `AbortSignal.timeout`, as in `upstream.ts`: cheaper than Deno
   * 2.9's Node-layer `setTimeout`, and nothing to clear (it finds the queue
   * empty).
   */
  #arm(ms: number): void {
    if (this.#armed) return;
    this.#armed = true;
    AbortSignal.timeout(ms).addEventListener("abort", () => {
      this.#armed = false;
      if (this.#queue.length === 0) return;
      const left = this.#queuedAt + this.#maxWaitMs - performance.now();
      if (left <= 0) this.#dispatch();
      else this.#arm(Math.ceil(left));
    }, { once: true });
  }

  #single(request: RpcRequest): Promise<string> {
    this.#inFlight++;
    return this.#upstream.send(upstreamText(request, UPSTREAM_ID)).then((answer) => {
      this.#done();
      return answerText(answer, UPSTREAM_ID, request.id ?? null);
    }, (e) => {
      this.#done();
      throw e;
    });
  }

  #done(): void {
    this.#inFlight--;
    if (this.#queue.length) this.#dispatch();
  }

  /** Sends what waits: alone if one request, else as one batch. */
  #dispatch(): void {
    if (this.#queue.length === 0) return;
    const take = this.#queue.splice(0, MAX_BATCH);
    if (take.length === 1) {
      const w = take[0];
      this.#single(w.request).then(w.resolve, w.reject);
      return;
    }
    this.#inFlight++;
    this.#batch(take).finally(() => this.#done());
  }

  async #batch(items: Waiting[]): Promise<void> {
    const wire = items.map((w, i) => upstreamRequest(w.request, i));
    let answers: unknown;
    try {
      answers = await this.#upstream.call(wire);
    } catch (e) {
      for (const w of items) w.reject(e);
      return;
    }
    if (!Array.isArray(answers)) {
      // The node does not take batches: send these (and everything later) alone.
      this.#noBatches = true;
      for (const w of items) this.#single(w.request).then(w.resolve, w.reject);
      return;
    }
    const byId = new Array<unknown>(items.length);
    for (const a of answers as { id?: unknown }[]) {
      if (a && typeof a.id === "number" && a.id >= 0 && a.id < items.length) byId[a.id] = a;
    }
    items.forEach((w, i) => {
      const a = byId[i];
      if (a) w.resolve(JSON.stringify(answerFrom(a, w.request.id ?? null)));
      else this.#single(w.request).then(w.resolve, w.reject); // missing element: ask alone
    });
  }
}
