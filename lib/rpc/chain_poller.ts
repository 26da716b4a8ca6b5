/**
 * Follows a node's chain by polling, for subscriptions when the node offers
 * no push channel: a block cursor (number and hash of the last block
 * reported) advances one block at a time, so every block is reported once,
 * in order, with no gap; when a new block's parent is not the block the
 * cursor holds, the chain was reorganised: the poller walks back to the
 * fork point, reports the dropped blocks (newest first, with the logs it had
 * reported for them) and then replays the new chain from the fork point, as
 * geth does. New pending transactions come from a pending-transaction filter
 * on the node. Polling runs only while something listens.
 *
 * @module
 */

import type { Upstream } from "./upstream.ts";

/** A block as `eth_getBlockByNumber(n, false)` returns it. */
export type RpcBlock = Record<string, unknown> & {
  number: string;
  hash: string;
  parentHash: string;
};

/** A log as `eth_getLogs` returns it. */
export type RpcLog = Record<string, unknown> & { address: string; topics: string[] };

/** What {@linkcode ChainPoller} reports. */
export interface ChainListener {
  /** A block joined the canonical chain; `logs` are its logs when asked for. */
  onBlock?(block: RpcBlock, logs: RpcLog[] | undefined): void;
  /** A block left the canonical chain (reorg); `logs` are the logs reported for it. */
  onRemoved?(block: RpcBlock, logs: RpcLog[] | undefined): void;
  /** Hashes of transactions that entered the node's pool. */
  onPending?(hashes: string[]): void;
  /** Whether this listener needs logs with each block. */
  wantsLogs?: boolean;
  /** Whether this listener needs pending transactions. */
  wantsPending?: boolean;
}

/** Options of {@linkcode ChainPoller}. */
export interface ChainPollerOptions {
  /** Milliseconds between polls; default 250. */
  intervalMs?: number;
  /** Called when a poll fails (the next poll retries). */
  onError?(error: unknown): void;
}

/** How many recent blocks are remembered to find a fork point. */
const DEPTH = 128;

interface Seen {
  block: RpcBlock;
  logs: RpcLog[] | undefined;
}

/**
 * Polls `upstream` for new blocks, logs and pending transactions and reports
 * them to its listeners.
 *
 * @example
 * ```ts
 * import type { Upstream } from "./upstream.ts";
 * declare const upstream: Upstream;
 * const poller = new ChainPoller(upstream);
 * const stop = await poller.listen({ onBlock: (b) => console.log(b.number) });
 * stop();
 * ```
 */
export class ChainPoller {
  readonly #upstream: Upstream;
  readonly #intervalMs: number;
  readonly #onError: (e: unknown) => void;
  readonly #listeners = new Set<ChainListener>();
  /** Recent canonical blocks, oldest first; the last one is the cursor. */
  #recent: Seen[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #busy = false;
  #placing: Promise<RpcBlock | undefined> | undefined;
  #filtering: Promise<unknown> | undefined;
  #pendingFilter: string | undefined;
  #stopped = false;

  /** Creates a poller; nothing is polled until something listens. */
  constructor(upstream: Upstream, options: ChainPollerOptions = {}) {
    this.#upstream = upstream;
    this.#intervalMs = options.intervalMs ?? 250;
    this.#onError = options.onError ?? (() => {});
  }

  /** How many listeners are registered (a test seam). */
  get listeners(): number {
    return this.#listeners.size;
  }

  /**
   * Registers a listener and starts polling from the current head (the head
   * itself is not reported). Resolves once the cursor is placed, so a block
   * mined afterwards is reported. Returns the function that unregisters it.
   */
  async listen(listener: ChainListener): Promise<() => void> {
    this.#listeners.add(listener);
    const off = () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#idle();
    };
    try {
      if (this.#recent.length === 0) {
        // Many subscribers arriving at once share one request for the head.
        this.#placing ??= this.#block("latest").finally(() => this.#placing = undefined);
        const head = await this.#placing;
        if (this.#recent.length === 0 && head) this.#recent.push({ block: head, logs: undefined });
      }
      if (listener.wantsPending && this.#pendingFilter === undefined) {
        this.#filtering ??= this.#upstream.request("eth_newPendingTransactionFilter")
          .finally(() => this.#filtering = undefined);
        const id = String(await this.#filtering);
        this.#pendingFilter ??= id;
      }
    } catch (e) {
      off();
      throw e;
    }
    this.#schedule();
    return off;
  }

  /** Stops polling for good. */
  close(): void {
    this.#stopped = true;
    this.#listeners.clear();
    this.#idle();
  }

  #idle(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#recent = [];
    const filter = this.#pendingFilter;
    this.#pendingFilter = undefined;
    if (filter !== undefined && !this.#stopped) {
      this.#upstream.request("eth_uninstallFilter", [filter]).catch(() => {});
    }
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#busy || this.#stopped || !this.#listeners.size) return;
    this.#timer = setTimeout(async () => {
      this.#timer = undefined;
      this.#busy = true;
      try {
        await this.#poll();
      } catch (e) {
        this.#onError(e);
      } finally {
        this.#busy = false;
      }
      this.#schedule();
    }, this.#intervalMs);
  }

  async #block(tag: string): Promise<RpcBlock | undefined> {
    const b = await this.#upstream.request("eth_getBlockByNumber", [tag, false]);
    return b && typeof b === "object" ? b as RpcBlock : undefined;
  }

  async #poll(): Promise<void> {
    if (this.#pendingFilter !== undefined) await this.#pollPending();
    let head = await this.#block("latest");
    if (!head || this.#recent.length === 0) return;
    let cursor = this.#recent[this.#recent.length - 1].block;
    if (head.hash === cursor.hash) return;
    let headNumber = Number(head.number);
    // After a rewind the head read at the start may itself be of the dropped chain (the chain
    // changed while this poll walked): read it again, or its stale parent would send the walk
    // back to the same rewind for ever.
    let rewinds = 0;
    const rewound = async (): Promise<boolean> => {
      // A node whose answers keep contradicting each other ends this poll; the next one retries.
      if (++rewinds > 8) return false;
      await this.#rewind();
      head = await this.#block("latest");
      if (!head) return false;
      headNumber = Number(head.number);
      return true;
    };
    // Advance one block at a time from the cursor to the head.
    while (this.#listeners.size && this.#recent.length) {
      cursor = this.#recent[this.#recent.length - 1].block;
      const next = Number(cursor.number) + 1;
      if (next > headNumber) {
        // The head went back (a reorg to a shorter chain): check the cursor is still canonical.
        const same = await this.#block("0x" + Number(cursor.number).toString(16));
        if (same && same.hash === cursor.hash) return;
        if (!(await rewound())) return;
        continue;
      }
      const block = next === headNumber ? head : await this.#block("0x" + next.toString(16));
      if (!block) return;
      if (block.parentHash !== cursor.hash) {
        if (!(await rewound())) return;
        continue;
      }
      const logs = [...this.#listeners].some((l) => l.wantsLogs)
        ? await this.#upstream.request("eth_getLogs", [{ blockHash: block.hash }]) as RpcLog[]
        : undefined;
      this.#recent.push({ block, logs });
      if (this.#recent.length > DEPTH) this.#recent.shift();
      for (const l of [...this.#listeners]) l.onBlock?.(block, logs);
    }
  }

  /** Drops remembered blocks that are no longer canonical, newest first, reporting each. */
  async #rewind(): Promise<void> {
    while (this.#recent.length) {
      const top = this.#recent[this.#recent.length - 1];
      const canonical = await this.#block(top.block.number);
      if (canonical && canonical.hash === top.block.hash) return;
      this.#recent.pop();
      for (const l of [...this.#listeners]) l.onRemoved?.(top.block, top.logs);
    }
    // Deeper than remembered: start again from the current head.
    const head = await this.#block("latest");
    if (head) this.#recent.push({ block: head, logs: undefined });
  }

  async #pollPending(): Promise<void> {
    let hashes: unknown;
    try {
      hashes = await this.#upstream.request("eth_getFilterChanges", [this.#pendingFilter]);
    } catch {
      // The node forgot the filter (restart, expiry): make a new one.
      this.#pendingFilter = String(await this.#upstream.request("eth_newPendingTransactionFilter"));
      return;
    }
    if (!Array.isArray(hashes) || hashes.length === 0) return;
    for (const l of [...this.#listeners]) if (l.wantsPending) l.onPending?.(hashes as string[]);
  }
}
