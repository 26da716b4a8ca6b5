/**
 * What every route and background worker of the emulator shares: the store,
 * the API user, the chain, the vault keys, the event bus, the faults, the
 * transaction engine, the clock and the log, plus the areas started later
 * (the webhook side), the console's per-run token and, once listening, the
 * base URL. Built once by `startEmulator`.
 *
 * @module
 */

import type { ApiUser } from "./http/api_user.ts";
import type { TransactionEngine } from "./transactions/engine.ts";
import type { TransactionConfig, TransactionDeps } from "./transactions/deps.ts";
import type { Webhooks } from "./webhooks/start.ts";
import type { WebhookSettings } from "./webhooks/engine.ts";

/** Settings fixed at start. */
export interface EmulatorConfig extends TransactionConfig {
  /** Divides every retry delay and breaker duration (the webhook engine reads it). */
  timeScale: number;
  /** Largest request body accepted, bytes. */
  maxBodyBytes: number;
  /** Log one line per request (method, path, status, time, request id). */
  logRequests?: boolean;
  /** Webhook delivery settings (each has its default in {@linkcode WebhookSettings}). */
  webhooks?: WebhookSettings;
}

/** The shared state of one running emulator: what the transaction side uses, and more. */
export interface EmulatorContext extends TransactionDeps {
  /** Settings fixed at start. */
  config: EmulatorConfig;
  /** Every API user of the workspace, the default one first (`http/api_user.ts`). */
  apiUsers: readonly ApiUser[];
  /** The transaction lifecycle engine (`transactions/engine.ts`). */
  transactions: TransactionEngine;
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
