/**
 * Starts an emulator: opens the store, checks the node and the chain id,
 * loads or creates the API user, builds the context and the handler over
 * `ROUTE_MODULES`, listens, and resumes unfinished work. Used by
 * `service emulator` and in-process by `service rpc --emulator` and tests.
 *
 * @module
 */

import { Whitelist } from "./vault/whitelist.ts";
import { blockedPortReason, toBase64Url, walk } from "../core/mod.ts";
import { EmulatorConfigError } from "./errors.ts";
import { Store } from "./store.ts";
import {
  type ApiUserSpec,
  ensureApiUsers,
  parseApiUserSpec,
  type RunningApiUser,
} from "./http/api_user.ts";
import { makeOwnedTempDir, removeStaleOwnedDirs } from "../core/owned_temp_dir.ts";
import { EventBus, type EventSink } from "./events.ts";
import { Faults, type FaultSpec, parseFaultSpec } from "./faults/faults.ts";
import { Chain } from "./chain.ts";
import { ANVIL_MNEMONIC, VaultKeys } from "./vault/keys.ts";
import { chainInfo } from "./vault/assets.ts";
import type { EmulatorContext } from "./context.ts";
import type { WebhookSettings } from "./webhooks/engine.ts";
import { createHandler } from "./http/handler.ts";
import { ROUTE_MODULES } from "./http/routes.ts";
import { TransactionEngine } from "./transactions/engine.ts";
import { serveBounded } from "../core/bounded_server.ts";
import { ErrorCode, isDropResponse } from "./http/reply.ts";
import { type DelayOption, delayRange } from "./transactions/custody_delays.ts";

/** The in-memory emulator's key directory (`api.pem`): `service-emulator-<pid>-*` in the temp dir. */
const KEY_DIR_PREFIX = "service-emulator-";

/** The loopback address named for a wildcard listening address. */
const WILDCARD_LOOPBACK: Record<string, string> = { "0.0.0.0": "127.0.0.1", "::": "::1" };

/** Options of {@linkcode startEmulator}; every default is stated. */
export interface EmulatorOptions {
  /** Interface to listen on; default `127.0.0.1`. */
  host?: string;
  /** Port; default 0 (a free port). */
  port?: number;
  /**
   * The node transactions are sent to, e.g. anvil's URL. Without one the
   * emulator serves webhooks only: webhooks, notifications, the console,
   * `trigger` and the breaker work; transaction and vault calls answer an
   * error saying a node is needed. Default: none.
   */
  rpcUrl?: string;
  /**
   * Expected chain id; start fails when the node's differs. Default: the
   * node's; without a node, the state file's, else 31337.
   */
  chainId?: number;
  /** SQLite file keeping the state across restarts (its keys in `<state>.keys`); default in memory. */
  state?: string;
  /** Divides retry delays and breaker durations (webhook delivery); default 1. */
  timeScale?: number;
  /** Number of vault accounts; default 10. */
  vaultAccounts?: number;
  /** BIP-39 mnemonic of the vault keys; default anvil's. */
  mnemonic?: string;
  /** Faults in force from the start (objects or `key=value,...` text). */
  faults?: (FaultSpec | string)[];
  /** Log lines (standard error in the CLI); default none. */
  log?: (line: string) => void;
  /** Log one line per request (method, path, status, duration); default false. */
  logRequests?: boolean;
  /**
   * More API users of the same workspace, besides the default ADMIN: each
   * `ROLE[:NAME]` text or `{role, name?}` makes one with its own key pair
   * (`api-<name>.pem` next to `api.pem`). Every call checks the caller's
   * role against the permission table (`http/permissions.ts`). Default: none.
   */
  apiUsers?: (ApiUserSpec | string)[];
  /** Largest request body, bytes; default 1 MiB. */
  maxBodyBytes?: number;
  /** A listener of every event (`transaction.created`, ...); default none. */
  events?: EventSink;
  /**
   * Webhook delivery settings: HTTP timeout of one attempt (default 10 s),
   * attempts in flight per endpoint (default 8), breaker parameters before
   * `timeScale` (default breaker.md's).
   */
  webhooks?: WebhookSettings;
  /**
   * Rehearses an approval policy: every new transaction (transfers, contract
   * calls and message signing alike) waits this long in PENDING_AUTHORIZATION,
   * then goes on to PENDING_SIGNATURE as an admin approval makes it.
   * Milliseconds, or `{minMs, maxMs}`: each transaction draws a uniform value
   * in the range. From 0 to 24 hours. A transaction held by a `hold` fault
   * waits for the admin endpoint instead. With `state`, a restart waits only
   * what remained. Default: none (0).
   */
  approvalDelay?: DelayOption;
  /**
   * Rehearses slow MPC signing: every transaction waits this long in
   * PENDING_SIGNATURE before it is signed (also after an admin approval).
   * Milliseconds or `{minMs, maxMs}`, as `approvalDelay`. Default: none (0).
   */
  signingDelay?: DelayOption;
}

/** A running emulator; its `apiKey`, `privateKeyPath` and `privateKeyPem` are the default user's. */
export interface RunningEmulator
  extends Pick<RunningApiUser, "apiKey" | "privateKeyPath" | "privateKeyPem"> {
  /** `http://host:port` (clients add `/v1`). */
  apiBaseUrl: string;
  /** Every API user, the default one first. */
  apiUsers: RunningApiUser[];
  /** The console page, with its per-run token (`?token=`); the console refuses requests without it. */
  consoleUrl: string;
  /** The JWKS of webhook signatures. */
  jwksUrl: string;
  /** Base of the admin endpoint (`X-API-Key` required). */
  adminUrl: string;
  /** The node's chain id. */
  chainId: number;
  /** The chain's base asset id. */
  assetId: string;
  /** The request handler, callable in-process. */
  handler: (req: Request) => Promise<Response>;
  /** Stops serving and background work, closes the store. */
  stop(): Promise<void>;
}

/**
 * Why a request to the node failed, in one line without a final period: the
 * client's own summary ("HTTP request failed") and the innermost cause
 * ("connection refused", "dns error ...") when it says more.
 */
function nodeFailure(e: unknown): string {
  const line = (x: unknown) =>
    String((x as { shortMessage?: string })?.shortMessage ?? (x as Error)?.message ?? x)
      .split("\n")[0].trim().replace(/[.\s]+$/, "");
  const outer = line(e);
  const deepest = line(walk(e)).slice(0, 200);
  return deepest && deepest !== outer ? `${outer}: ${deepest}` : outer;
}

/**
 * Starts an emulator and returns once it listens.
 *
 * @example
 * ```ts
 * const emu = await startEmulator({ rpcUrl: "http://127.0.0.1:8545" });
 * console.log(emu.apiBaseUrl, emu.apiKey);
 * await emu.stop();
 * ```
 */
export async function startEmulator(o: EmulatorOptions): Promise<RunningEmulator> {
  if (o.rpcUrl !== undefined && !/^https?:$/.test(URL.parse(o.rpcUrl)?.protocol ?? "")) {
    throw new EmulatorConfigError(
      `Invalid --rpcUrl ${JSON.stringify(o.rpcUrl)}: expected an http(s) URL.`,
    );
  }
  const log = o.log ?? (() => {});
  const vaultAccounts = o.vaultAccounts ?? 10;
  if (!Number.isInteger(vaultAccounts) || vaultAccounts < 1 || vaultAccounts > 10_000) {
    throw new EmulatorConfigError("--vaultAccounts must be an integer from 1 to 10000.");
  }
  const timeScale = o.timeScale ?? 1;
  if (!(timeScale > 0) || !Number.isFinite(timeScale)) {
    throw new EmulatorConfigError("--timeScale must be a positive number.");
  }
  // an EmulatorConfigError naming the option when it cannot work
  const approvalDelay = delayRange("approvalDelay", o.approvalDelay);
  const signingDelay = delayRange("signingDelay", o.signingDelay);
  const userSpecs = (o.apiUsers ?? []).map((u) => typeof u === "string" ? parseApiUserSpec(u) : u);
  const faults = new Faults();
  for (const f of o.faults ?? []) {
    try {
      faults.add(parseFaultSpec(f));
    } catch (e) {
      throw new EmulatorConfigError(`Invalid --fault: ${(e as Error).message}.`);
    }
  }
  let keys: VaultKeys;
  try {
    keys = new VaultKeys((o.mnemonic ?? ANVIL_MNEMONIC).trim(), vaultAccounts);
  } catch {
    throw new EmulatorConfigError("Invalid --mnemonic: expected a BIP-39 mnemonic phrase.");
  }
  // without a node: webhooks only (routes marked `node` answer an error); the chain id is the
  // one asked, else anvil's, for the asset tables
  const chain = o.rpcUrl ? new Chain(o.rpcUrl) : undefined;
  let chainId = o.chainId ?? 31337;
  if (chain) {
    try {
      chainId = await chain.client.getChainId();
    } catch (e) {
      throw new EmulatorConfigError(
        blockedPortReason(o.rpcUrl!)
          ? `Cannot reach the node at --rpcUrl ${o.rpcUrl}: ${
            blockedPortReason(o.rpcUrl!)
          }. Run the node on another port and give that one.`
          : `Cannot reach the node at --rpcUrl ${o.rpcUrl} (${
            nodeFailure(e)
          }). Start it first (e.g. anvil) or fix the URL.`,
      );
    }
    if (o.chainId !== undefined && o.chainId !== chainId) {
      throw new EmulatorConfigError(
        `--chainId ${o.chainId} does not match the node's chain id ${chainId} at ${o.rpcUrl}.`,
      );
    }
  }

  let store: Store;
  try {
    store = Store.open(o.state); // the file, its WAL and shared memory are 0600 (store.ts)
  } catch (e) {
    throw new EmulatorConfigError(
      `Cannot open the state file ${JSON.stringify(o.state)}: ${(e as Error).message}.`,
    );
  }
  let tempDir: string | undefined;
  try {
    const storedChain = store.getMeta("chain_id");
    if (storedChain && !chain && o.chainId === undefined) chainId = Number(storedChain);
    if (storedChain && Number(storedChain) !== chainId) {
      throw new EmulatorConfigError(
        `The state file ${o.state} belongs to chain ${storedChain}, but the node is chain ${chainId}. Use another --state file.`,
      );
    }
    store.setMeta("chain_id", String(chainId));
    const storedAddress = store.getMeta("vault_address_0");
    if (storedAddress && storedAddress !== keys.address(0)) {
      throw new EmulatorConfigError(
        `The state file ${o.state} was made with another --mnemonic. Use the same mnemonic or another --state file.`,
      );
    }
    store.setMeta("vault_address_0", keys.address(0));
    // accounts only ever grow: a restart with a smaller --vaultAccounts keeps the stored ones
    const accountCount = Math.max(vaultAccounts, Number(store.getMeta("vault_accounts") ?? 0));
    if (accountCount !== vaultAccounts) {
      keys = new VaultKeys((o.mnemonic ?? ANVIL_MNEMONIC).trim(), accountCount);
    }
    store.setMeta("vault_accounts", String(accountCount));
    let dir = o.state ? `${o.state}.keys` : undefined;
    if (!dir) {
      // a private directory named after this process (`service-emulator-<pid>-*`), removed on
      // stop; ones left by dead emulators (SIGKILL, a crash: no code ran) are removed here
      dir = tempDir = await makeOwnedTempDir(KEY_DIR_PREFIX);
      const stale = await removeStaleOwnedDirs(KEY_DIR_PREFIX, tempDir);
      if (stale.length > 0) {
        log(`removed ${stale.length} key directory(ies) left by dead emulators`);
      }
    }
    const apiUsers = await ensureApiUsers(store, dir, userSpecs);
    const apiUser = apiUsers[0];
    const info = chainInfo(chainId);
    const events = new EventBus((e) => log(`event listener failed: ${(e as Error)?.message ?? e}`));
    if (o.events) events.listen(o.events);
    const shared: Omit<EmulatorContext, "transactions"> = {
      config: {
        chainId,
        assetId: info.assetId,
        timeScale,
        maxBodyBytes: o.maxBodyBytes ?? 1024 * 1024,
        logRequests: o.logRequests ?? false,
        webhooks: o.webhooks,
        approvalDelay,
        signingDelay,
      },
      store,
      apiUsers,
      chain,
      keys,
      events,
      faults,
      whitelist: new Whitelist(store),
      log,
      now: Date.now,
      uuid: () => crypto.randomUUID(),
      consoleToken: toBase64Url(crypto.getRandomValues(new Uint8Array(24))),
    };
    const ctx: EmulatorContext = Object.assign(shared, {
      transactions: new TransactionEngine(shared),
    });
    const modules = ROUTE_MODULES;
    const handle = createHandler(ctx, modules); // the handler's stores create their tables
    for (const m of modules) await m.start?.(ctx);
    let server;
    try {
      // the connection bounds every long-running command shares; a response carrying the drop
      // marker (a `drop` fault, ../faults/apply.ts) closes its connection without any answer
      server = await serveBounded(handle, {
        hostname: o.host ?? "127.0.0.1",
        port: o.port ?? 0,
        isDrop: isDropResponse,
        onError: (e) => {
          log(`server error: ${(e as Error)?.message ?? e}`);
          const body = { message: "Internal error of the emulator.", code: ErrorCode.internal };
          return Response.json(body, { status: 500 });
        },
      });
    } catch (e) {
      for (const m of modules) await m.stop?.(ctx);
      throw new EmulatorConfigError(
        `Cannot listen on ${o.host ?? "127.0.0.1"}:${o.port ?? 0}: ${(e as Error).message}.`,
      );
    }
    // a wildcard address is not one a client can connect to: name loopback instead
    const shown = WILDCARD_LOOPBACK[server.hostname] ?? server.hostname;
    const host = shown.includes(":") ? `[${shown}]` : shown;
    const base = `http://${host}:${server.port}`;
    ctx.baseUrl = base;
    log(
      `emulator ready on ${base}: chain ${chainId} (${info.assetId}), ${accountCount} vault accounts, ${
        chain
          ? `node ${chain.url}`
          : "no node (webhooks only: transaction and vault calls need --rpcUrl)"
      }, state ${o.state ?? "in memory"}`,
    );
    let stopped = false;
    return {
      apiBaseUrl: base,
      apiKey: apiUser.apiKey,
      privateKeyPath: apiUser.privateKeyPath,
      privateKeyPem: apiUser.privateKeyPem,
      apiUsers: apiUsers.map(({ id: _id, publicKey: _key, ...u }) => u),
      consoleUrl: `${base}/console?token=${ctx.consoleToken}`,
      jwksUrl: `${base}/.well-known/jwks.json`,
      adminUrl: `${base}/admin`,
      chainId,
      assetId: info.assetId,
      handler: handle,
      async stop() {
        if (stopped) return;
        stopped = true;
        await server.close();
        for (const m of [...modules].reverse()) {
          try {
            await m.stop?.(ctx);
          } catch (e) {
            log(`stopping ${m.name} failed: ${(e as Error)?.message ?? e}`);
          }
        }
        store.close();
        if (tempDir) await Deno.remove(tempDir, { recursive: true }).catch(() => {});
      },
    };
  } catch (e) {
    store.close();
    if (tempDir) await Deno.remove(tempDir, { recursive: true }).catch(() => {});
    throw e;
  }
}
