/**
 * The statuses of an emulated transaction and the ONE table saying which
 * status may follow which. The engine (`engine.ts`) checks every change
 * against {@linkcode canFollow}; nothing else changes a status.
 *
 * The walk, on the way to completion ({@linkcode TRANSITIONS} says it as data):
 *
 * ```
 * SUBMITTED             → PENDING_AUTHORIZATION (held by a fault, or an approval delay) | PENDING_SIGNATURE
 * PENDING_AUTHORIZATION → PENDING_SIGNATURE (approved through the admin endpoint, or the delay ended)
 * PENDING_SIGNATURE     → BROADCASTING (signed) | COMPLETED (messages: signed, nothing sent)
 * BROADCASTING          → CONFIRMING (sent) | PENDING_SIGNATURE (nonce refused: signed again)
 * CONFIRMING            → COMPLETED (mined)
 * ```
 *
 * Any status not yet final may also end in a failure (`CANCELLED`,
 * `REJECTED`, `BLOCKED`, `FAILED`, `TIMEOUT`): a fault, the admin endpoint,
 * a cancel or a node error. A final status (`isFinalTransactionStatus` of
 * the vocabulary) has no successor.
 *
 * The status names come from the shared vocabulary (`lib/core/vocabulary.ts`);
 * the emulator holds a transaction in `PENDING_AUTHORIZATION` (its
 * {@linkcode HELD_STATUS}) while a `hold` fault keeps it, or for the approval
 * delay (`custody_delays.ts`).
 *
 * @module
 */

import { BaseError, TRANSACTION_FAILURE_STATUSES, type TransactionStatus } from "../../core/mod.ts";
import type { SignedBytes, TransactionRecord } from "./store.ts";

/** The status of a transaction held by a `hold` fault until approved. */
export const HELD_STATUS = "PENDING_AUTHORIZATION" satisfies TransactionStatus;

/** A status an emulated transaction can have (the vocabulary's). */
export type EmulatorTransactionStatus = TransactionStatus;

/** A final status that ends a transaction in failure. */
type FailureStatus = (typeof TRANSACTION_FAILURE_STATUSES)[number];

/**
 * Final statuses a `finalStatus` fault or the admin endpoint can force, in
 * the order error messages list them (the vocabulary's failure statuses).
 */
export const FORCEABLE_STATUSES = [
  "REJECTED",
  "BLOCKED",
  "CANCELLED",
  "TIMEOUT",
  "FAILED",
] as const satisfies readonly FailureStatus[];

/** A final status that can be forced (one of {@linkcode FORCEABLE_STATUSES}). */
export type ForceableStatus = (typeof FORCEABLE_STATUSES)[number];

/** Statuses from which a user may still cancel (nothing signed yet). */
export const CANCELLABLE_STATUSES = [
  "SUBMITTED",
  HELD_STATUS,
] as const satisfies readonly EmulatorTransactionStatus[];

/**
 * The transition table: for each status not yet final, the statuses that may
 * follow it (any failure status among them); a final status has no entry.
 */
export const TRANSITIONS: Readonly<
  Partial<Record<EmulatorTransactionStatus, readonly EmulatorTransactionStatus[]>>
> = {
  SUBMITTED: [HELD_STATUS, "PENDING_SIGNATURE", ...TRANSACTION_FAILURE_STATUSES],
  [HELD_STATUS]: ["PENDING_SIGNATURE", ...TRANSACTION_FAILURE_STATUSES],
  PENDING_SIGNATURE: ["BROADCASTING", "COMPLETED", ...TRANSACTION_FAILURE_STATUSES],
  BROADCASTING: ["CONFIRMING", "PENDING_SIGNATURE", ...TRANSACTION_FAILURE_STATUSES],
  CONFIRMING: ["COMPLETED", ...TRANSACTION_FAILURE_STATUSES],
};

/**
 * Whether status `to` may follow status `from` (per {@linkcode TRANSITIONS}).
 *
 * @example
 * ```ts
 * canFollow("BROADCASTING", "CONFIRMING"); // true
 * canFollow("COMPLETED", "FAILED"); // false
 * ```
 */
export function canFollow(from: EmulatorTransactionStatus, to: EmulatorTransactionStatus): boolean {
  return TRANSITIONS[from]?.includes(to) ?? false;
}

/**
 * A status change the engine refused: not in {@linkcode TRANSITIONS}, or on a
 * transaction that is not stored. A bug of the emulator, never a client's
 * mistake; the walk ends such a transaction in FAILED (`INTERNAL_ERROR`).
 *
 * @example
 * ```ts
 * throw new TransactionStateError('Transaction "t1" cannot go from COMPLETED to FAILED.');
 * ```
 */
export class TransactionStateError extends BaseError {
  /** The class name. */
  override name = "TransactionStateError";
}

/**
 * The `subStatus` a forced failure gets when none is given.
 *
 * @example
 * ```ts
 * defaultSubStatus("REJECTED"); // "REJECTED_BY_USER"
 * defaultSubStatus("FAILED"); // ""
 * ```
 */
export function defaultSubStatus(status: EmulatorTransactionStatus): string {
  return DEFAULT_SUB_STATUS[status] ?? "";
}

const DEFAULT_SUB_STATUS: Partial<Record<EmulatorTransactionStatus, string>> = {
  REJECTED: "REJECTED_BY_USER",
  BLOCKED: "BLOCKED_BY_POLICY",
  CANCELLED: "CANCELLED_BY_USER",
  TIMEOUT: "TIMEOUT",
};

/**
 * The one way to change a transaction's status, which the engine provides
 * to the broadcaster and the confirmation watcher: every move is checked
 * against {@linkcode TRANSITIONS}. A move on a transaction that already
 * ended (e.g. forced through the admin endpoint while the walk was busy) is
 * ignored: a final status never changes.
 */
export interface StatusMoves {
  /**
   * Moves transaction `id` to `status`, with the other fields of `patch`
   * and, when given, the signed bytes kept with it; returns the record.
   */
  move(
    id: string,
    status: EmulatorTransactionStatus,
    patch?: Partial<TransactionRecord>,
    signed?: SignedBytes,
  ): TransactionRecord;
  /** Moves transaction `id` to FAILED with `subStatus` and the node's `description`. */
  fail(
    id: string,
    subStatus: string,
    description: string,
    fields?: Partial<TransactionRecord>,
  ): void;
  /** The current status of `id`, or `undefined`. */
  statusOf(id: string): EmulatorTransactionStatus | undefined;
}
