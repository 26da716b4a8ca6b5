/**
 * A real anvil plus an in-process emulator (`startEmulator`) pointed at it,
 * with the project's own platform client for the emulator. No mocks.
 *
 * @module
 */

import { type Anvil, startAnvil } from "./tools.ts";
import { apiCaller } from "./emulator_process.ts";
import { waitFor } from "./wait_for.ts";
import {
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator,
} from "../../lib/emulator/mod.ts";
import { toBase64Url as base64url } from "../../lib/core/mod.ts";
import {
  importPrivateKeySigner,
  loadCredentials,
  PlatformClient,
  type QueryValue,
  sha256Hex,
} from "../../lib/platform/mod.ts";

/** anvil + emulator + client. */
export interface Fixture {
  anvil: Anvil;
  emu: RunningEmulator;
  client: PlatformClient;
  /** Log lines the emulator wrote. */
  logs: string[];
  /** One request; never throws for a 4xx/5xx answer. */
  api<T = Record<string, unknown>>(
    method: "GET" | "POST" | "PATCH" | "DELETE",
    path: string,
    opts?: { body?: unknown; query?: Record<string, QueryValue>; idempotencyKey?: string },
  ): Promise<{ status: number; data: T; headers: Headers }>;
  /** Polls a transaction until `done(tx)` or 20 s. */
  waitTx(
    id: string,
    done?: (t: Record<string, unknown>) => boolean,
  ): Promise<Record<string, unknown>>;
  /** An admin request (X-API-Key only). */
  // deno-lint-ignore no-explicit-any
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; data: any }>;
  stop(): Promise<void>;
}

const FINAL = ["COMPLETED", "FAILED", "CANCELLED", "REJECTED", "BLOCKED", "TIMEOUT"];

/** Starts anvil (or reuses `anvil`) and an emulator on it. */
export async function startFixture(
  options: Partial<EmulatorOptions> = {},
  anvilIn?: Anvil,
): Promise<Fixture> {
  const anvil = anvilIn ?? await startAnvil();
  const logs: string[] = [];
  let emu: RunningEmulator;
  try {
    emu = await startEmulator({ rpcUrl: anvil.url, log: (l) => logs.push(l), ...options });
  } catch (e) {
    if (!anvilIn) await anvil.stop();
    throw e;
  }
  const client = new PlatformClient(
    await loadCredentials({
      apiKey: emu.apiKey,
      privateKey: emu.privateKeyPem,
      apiBaseUrl: emu.apiBaseUrl,
    }),
    { retries: 0, timeoutMs: 20_000 },
  );
  const api: Fixture["api"] = apiCaller(client);
  return {
    anvil,
    emu,
    client,
    logs,
    api,
    waitTx(id, done = (t) => FINAL.includes(String(t.status))) {
      let last: unknown;
      return waitFor(
        () => `transaction ${id} to reach the expected state (last: ${JSON.stringify(last)})`,
        async () => {
          const r = await api("GET", `/v1/transactions/${id}`);
          last = r.data;
          return r.status === 200 && done(r.data) ? r.data : undefined;
        },
        20_000,
        20,
      );
    },
    async admin(method, path, body) {
      const res = await fetch(`${emu.adminUrl}${path}`, {
        method,
        headers: { "X-API-Key": emu.apiKey, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, data: text ? JSON.parse(text) : undefined };
    },
    async stop() {
      await emu.stop();
      if (!anvilIn) await anvil.stop();
    },
  };
}

/** Signs a request token with arbitrary claims (for auth refusal tests). */
export async function signClaims(pem: string, claims: Record<string, unknown>): Promise<string> {
  const signer = await importPrivateKeySigner(pem, "test");
  const head = base64url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
  const payload = base64url(JSON.stringify(claims));
  const sig = await signer.sign(new TextEncoder().encode(`${head}.${payload}`));
  return `${head}.${payload}.${base64url(sig)}`;
}

/** Valid claims for `uri` and `body` now; override any. */
export async function claimsFor(
  apiKey: string,
  uri: string,
  body = "",
  over: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const iat = Math.floor(Date.now() / 1000);
  return {
    uri,
    nonce: crypto.randomUUID(),
    iat,
    exp: iat + 30,
    sub: apiKey,
    bodyHash: await sha256Hex(body),
    ...over,
  };
}

/** A transfer request from vault account `from` to `to`. */
export function transfer(
  assetId: string,
  from: string,
  to: string,
  amount: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    operation: "TRANSFER",
    assetId,
    source: { type: "VAULT_ACCOUNT", id: from },
    destination: { type: "ONE_TIME_ADDRESS", oneTimeAddress: { address: to } },
    amount,
    ...extra,
  };
}

/**
 * Init code of a tiny contract (hand-assembled, no compiler): a call with
 * calldata stores the word at bytes 4..36 in slot 0; a call without
 * calldata reverts.
 */
export const STORE_CONTRACT_INIT = "0x6011600c60003960116000f33615600c57600435600055005b600080fd";
