/**
 * `service emulator`: a local stand-in for the platform API — vault
 * accounts, assets, transactions signed with real keys and sent to a real
 * node, request authentication verified for real, idempotency, fault
 * injection, SQLite state.
 *
 * @example
 * ```ts
 * import { startEmulator } from "./mod.ts";
 * const emu = await startEmulator({ rpcUrl: "http://127.0.0.1:8545" });
 * const res = await emu.handler(new Request(emu.jwksUrl)); // in-process, no network
 * await emu.stop();
 * ```
 *
 * @module
 */

export { startEmulator } from "./emulator.ts";
export { EmulatorConfigError } from "./errors.ts";
export type { EmulatorOptions, RunningEmulator } from "./emulator.ts";
export type { ApiUserSpec, RunningApiUser } from "./http/api_user.ts";
export { API_USER_ROLES, type ApiUserRole } from "./http/permissions.ts";
export type { EmulatorEvent, EventSink } from "./events.ts";
export type { FaultSpec } from "./faults/faults.ts";
export type { WebhookSettings } from "./webhooks/engine.ts";
export type { DelayOption, DelayRange } from "./transactions/custody_delays.ts";
export { FORCEABLE_STATUSES } from "./transactions/status.ts";
export type { ForceableStatus } from "./transactions/status.ts";
// Types the exports above name, re-exported so that this barrel documents them.
export type { BaseError } from "../core/mod.ts";
export type { BreakerConfig } from "../webhooks/mod.ts";
