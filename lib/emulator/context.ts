/**
 * What every route and background worker of the emulator shares: the store,
 * the API user, the chain, the vault keys, the event bus, the faults, the
 * transaction engine, the clock and the log, plus the areas started later
 * (the webhook side), the console's per-run token and, once listening, the
 * base URL. Built once by `startEmulator`.
 *
 * @module
 */

import type { Whitelist } from "./vault/whitelist.ts";
import type { Store } from "./store.ts";
import type { ApiUser } from "./http/api_user.ts";
import type { EventBus } from "./events.ts";
import type { Faults } from "./faults/faults.ts";
import type { Chain } from "./chain.ts";
import type { VaultKeys } from "./vault/keys.ts";
import type { TransactionEngine } from "./transactions/engine.ts";
import type { Webhooks, WebhookSettings } from "./webhooks/start.ts";
import type { DelayRange } from "./transactions/custody_delays.ts";

/** Settings fixed at start. */
export interface EmulatorConfig {
  /** The node's chain id. */
  chainId: number;
  /** The chain's base asset id (e.g. `ETH_TEST5`, or `ETH_TEST_31337` for anvil). */
  assetId: string;
  /** Divides every retry delay and breaker duration (the webhook engine reads it). */
  timeScale: number;
  /** Number of vault accounts. */
  vaultAccounts: number;
  /** Largest request body accepted, bytes. */
  maxBodyBytes: number;
  /** Log one line per request (method, path, status, time, request id). */
  logRequests?: boolean;
  /** Webhook delivery settings (each has its default in {@linkcode WebhooksOptions}). */
  webhooks?: WebhookSettings;
  /** How long each new transaction waits in PENDING_AUTHORIZATION (none when absent). */
  approvalDelay?: DelayRange;
  /** How long each transaction waits in PENDING_SIGNATURE before it is signed (none when absent). */
  signingDelay?: DelayRange;
}

/** The shared state of one running emulator. */
export interface EmulatorContext {
  /** Settings fixed at start. */
  config: EmulatorConfig;
  /** The SQLite store. */
  store: Store;
  /** The default API user (an ADMIN; the ready line's `apiKey`). */
  apiUser: ApiUser;
  /** Every API user of the workspace, the default one first (`http/api_user.ts`). */
  apiUsers: readonly ApiUser[];
  /**
   * The node transactions go to; absent when the emulator runs without
   * `--rpcUrl` (webhooks only: routes marked `node` answer an error).
   */
  chain?: Chain;
  /** The vault accounts' keys. */
  keys: VaultKeys;
  /** `emit({eventType, resourceId, data})`; listeners subscribe with `listen`. */
  events: EventBus;
  /** Fault rules in force (applied in `faults/apply.ts`). */
  faults: Faults;
  /** The whitelisted wallets of this run (`vault/whitelist.ts`). */
  whitelist: Whitelist;
  /** The transaction lifecycle engine (`transactions/engine.ts`). */
  transactions: TransactionEngine;
  /** A log line on standard error (never secrets). */
  log(line: string): void;
  /** Clock, ms. */
  now(): number;
  /** Id source. */
  uuid(): string;
  /** The webhook side, once its module has started (undefined before). */
  webhooks?: Webhooks;
  /**
   * The console's per-run token: the console URL printed at start carries
   * it, and every console route requires it (`http/console_guard.ts`).
   */
  consoleToken: string;
  /** `http://host:port` once the server listens (undefined before). */
  baseUrl?: string;
}

export type { WebhookSettings };
