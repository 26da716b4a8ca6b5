/**
 * Custody slower than a client's timeout, for end-to-end tests and the
 * `scripts/probe_slow_custody.ts` measurements: the emulator's `hold` fault
 * keeps new transactions in PENDING_AUTHORIZATION, and an approver releases
 * each one a fixed time after it appeared (as an approval policy would).
 * Counts what happened: platform transactions, `eth_sendTransaction`
 * messages the bridge received (its `--verbose` trace), the account's nonce.
 * The fault helpers (`fault`, `faultsInForce`, `clearFaults`) serve the
 * fault tests too (`tests/e2e/rpc_faults_test.ts`, `rpc_slow_faults_test.ts`).
 *
 * @module
 */

import { anvilCall, type Stack } from "./rpc_stack.ts";
import { loadCredentials, PlatformClient } from "../../lib/platform/mod.ts";

/** A platform transaction as the list endpoint returns it. */
export interface PlatformTx {
  id: string;
  status: string;
  txHash?: string;
  externalTxId?: string;
  createdAt?: number;
  note?: string;
}

/** A request to the emulator's admin endpoint (`path` under `adminUrl`); throws unless 2xx. */
export async function admin(stack: Stack, method: string, path: string, body?: unknown) {
  const r = await fetch(`${stack.emulator.adminUrl}${path}`, {
    method,
    headers: { "content-type": "application/json", "x-api-key": stack.emulator.apiKey },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
}

/** Holds the next `count` new transactions (every new one when absent) for approval. */
export async function hold(stack: Stack, count?: number): Promise<void> {
  await admin(
    stack,
    "POST",
    "/faults",
    count === undefined ? { kind: "hold" } : {
      kind: "hold",
      count,
    },
  );
}

/** Adds a fault rule (`{kind, ...}`, as `POST /admin/faults` takes it). */
export async function fault(stack: Stack, spec: Record<string, unknown>): Promise<void> {
  await admin(stack, "POST", "/faults", spec);
}

/** The fault rules still in force (a rule is removed once its count is used up). */
export async function faultsInForce(
  stack: Stack,
): Promise<{ id: string; kind: string; remaining: number | null }[]> {
  const r = await fetch(`${stack.emulator.adminUrl}/faults`, {
    headers: { "x-api-key": stack.emulator.apiKey },
  });
  const body = await r.json();
  if (r.status !== 200) throw new Error(`GET /faults: ${r.status} ${JSON.stringify(body)}`);
  return body.faults;
}

/** Removes every fault rule. */
export async function clearFaults(stack: Stack): Promise<void> {
  await admin(stack, "DELETE", "/faults");
}

/** Approves a held transaction. */
export async function approve(stack: Stack, id: string): Promise<void> {
  await admin(stack, "POST", `/transactions/${id}/approve`);
}

/** Every platform transaction of the emulator, newest first. */
export async function platformTransactions(stack: Stack): Promise<PlatformTx[]> {
  const client = new PlatformClient(
    await loadCredentials({
      apiKey: stack.emulator.apiKey,
      privateKey: stack.emulator.privateKeyPath,
      apiBaseUrl: stack.emulator.apiBaseUrl,
    }),
  );
  const { data } = await client.request("GET", "/v1/transactions", {
    operation: "list transactions",
    query: { limit: 500 },
  });
  return (Array.isArray(data) ? data : (data as { data?: unknown[] }).data ?? []) as PlatformTx[];
}

/** The platform transactions whose externalTxId starts with `prefix`. */
export async function transactionsWithPrefix(stack: Stack, prefix: string): Promise<PlatformTx[]> {
  return (await platformTransactions(stack)).filter((t) => t.externalTxId?.startsWith(prefix));
}

/** Releases held transactions `holdMs` after each was first seen held. */
export interface Approver {
  /** Ids approved so far, in order. */
  approved: string[];
  /** Ids seen held so far. */
  held: string[];
  /** Stops watching (held transactions not yet approved stay held). */
  stop(): Promise<void>;
}

/**
 * Watches the emulator every 100 ms and approves each held transaction
 * `holdMs` after it was first seen in PENDING_AUTHORIZATION.
 */
export function approveAfter(stack: Stack, holdMs: number): Approver {
  const firstSeen = new Map<string, number>();
  const approved: string[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const t of await platformTransactions(stack)) {
        if (t.status !== "PENDING_AUTHORIZATION") continue;
        if (!firstSeen.has(t.id)) firstSeen.set(t.id, Date.now());
        if (Date.now() - firstSeen.get(t.id)! >= holdMs) {
          await approve(stack, t.id);
          approved.push(t.id);
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    approved,
    get held() {
      return [...firstSeen.keys()];
    },
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** How many `eth_sendTransaction` messages a `--verbose` bridge's stderr shows it received. */
export function sendsReceived(stderr: string): number {
  return stderr.split("\n").filter((l) =>
    /^-> /.test(l.replace(/^.*?(-> )/, "$1")) && l.includes('"eth_sendTransaction"')
  ).length;
}

/** The account's nonce on chain (transactions mined from it). */
export async function nonceOf(stack: Stack, address: string): Promise<number> {
  return Number(await anvilCall(stack.anvil.url, "eth_getTransactionCount", [address, "latest"]));
}

/**
 * The params of the last `eth_sendTransaction` a `--verbose` bridge received, to repeat the
 * identical call; throws when the trace cut the message short.
 */
export function lastSendParams(stderr: string): unknown[] {
  const line = stderr.split("\n").filter((l) =>
    l.startsWith("-> ") && l.includes('"eth_sendTransaction"')
  ).at(-1);
  if (line === undefined) throw new Error("the bridge received no eth_sendTransaction");
  if (/… \(\d+ characters\)$/.test(line)) throw new Error(`the trace cut the send: ${line}`);
  return (JSON.parse(line.slice(3)) as { params: unknown[] }).params;
}
