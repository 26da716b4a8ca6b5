/**
 * What the transaction side (engine, request checks, broadcaster, fee
 * estimates) takes of the emulator: the settings it reads, the store, the
 * node, the vault keys, the event bus, the faults, the whitelist, the log,
 * the clock and the id source. The emulator's context (`../context.ts`)
 * extends it and is passed as is; these modules import this interface, never
 * the context, so the context's types and theirs form no ring.
 *
 * @module
 */

import type { Store } from "../store.ts";
import type { Chain } from "../chain.ts";
import type { VaultKeys } from "../vault/keys.ts";
import type { EventBus } from "../events.ts";
import type { Faults } from "../faults/faults.ts";
import type { Whitelist } from "../vault/whitelist.ts";
import type { DelayRange } from "./custody_delays.ts";

/** The settings the transaction side reads. */
export interface TransactionConfig {
  /** The node's chain id. */
  readonly chainId: number;
  /** The chain's base asset id (e.g. `ETH_TEST5`, or `ETH_TEST_31337` for anvil). */
  readonly assetId: string;
  /** How long each new transaction waits in PENDING_AUTHORIZATION (none when absent). */
  readonly approvalDelay?: DelayRange;
  /** How long each transaction waits in PENDING_SIGNATURE before it is signed (none when absent). */
  readonly signingDelay?: DelayRange;
}

/** The parts of the emulator's context the transaction side uses (the context extends it). */
export interface TransactionDeps {
  /** The settings read here. */
  readonly config: TransactionConfig;
  /** The SQLite store. */
  readonly store: Store;
  /**
   * The node transactions go to; absent when the emulator runs without
   * `--rpcUrl` (webhooks only: routes marked `node` answer an error).
   */
  readonly chain?: Chain;
  /** The vault accounts' keys. */
  readonly keys: VaultKeys;
  /** `emit({eventType, resourceId, data})`; listeners subscribe with `listen`. */
  readonly events: EventBus;
  /** Fault rules in force (applied in `faults/apply.ts`). */
  readonly faults: Faults;
  /** The whitelisted wallets of this run (`vault/whitelist.ts`). */
  readonly whitelist: Whitelist;
  /** A log line on standard error (never secrets). */
  log(line: string): void;
  /** Clock, ms. */
  now(): number;
  /** Id source. */
  uuid(): string;
}
