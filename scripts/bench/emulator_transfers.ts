/**
 * Benchmark: 1,000 transfers created and completed through `service
 * emulator` (a separate process) to anvil, against a baseline in the same
 * run: the same 1,000 transfers, signed in advance, sent straight to a fresh
 * anvil and waited for. Reports transfers per second for both and the
 * emulator's share of the time: (emulator − baseline) / emulator.
 *
 * Both runs are repeated `--rounds` times, alternating, and the round with
 * the median emulator/baseline ratio is reported (the machine is shared).
 *
 * Run: deno run -A scripts/bench/emulator_transfers.ts [--count 1000] [--concurrency 32] [--rounds 3]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { createPublicClient, type Hex, http, keccak256, parseEther } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { startAnvil } from "../anvil.ts";
import { loadCredentials, PlatformClient } from "../../lib/platform/mod.ts";
import { cpuMs } from "./proc.ts";

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "32" },
    rounds: { type: "string", default: "3" },
  },
});
const COUNT = Number(values.count);
const CONCURRENCY = Number(values.concurrency);
const ROUNDS = Number(values.rounds);
const ACCOUNTS = 10;
const MNEMONIC = "test test test test test test test test test test test junk";
const ROOT = new URL("../../", import.meta.url).pathname;

/** Runs `jobs` with at most `n` at a time. */
async function pool<T>(n: number, jobs: (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]();
    }
  }));
  return out;
}

function destinations(): Hex[] {
  return Array.from(
    { length: COUNT },
    (_, i) => `0x${(0x1000 + i).toString(16).padStart(40, "0")}` as Hex,
  );
}

async function baseline(): Promise<{ ms: number; anvilCpuMs: number }> {
  const node = await startAnvil();
  try {
    const client = createPublicClient({ transport: http(node.url, { batch: false }) });
    const chainId = await client.getChainId();
    const block = await client.getBlock();
    const maxFeePerGas = block.baseFeePerGas! * 2n + 1_000_000_000n;
    const accounts = Array.from(
      { length: ACCOUNTS },
      (_, i) => mnemonicToAccount(MNEMONIC, { addressIndex: i }),
    );
    const to = destinations();
    const raws: Hex[] = [];
    for (let i = 0; i < COUNT; i++) {
      const a = accounts[i % ACCOUNTS];
      raws.push(
        await a.signTransaction({
          chainId,
          type: "eip1559",
          to: to[i],
          value: parseEther("0.001"),
          gas: 21000n,
          nonce: Math.floor(i / ACCOUNTS),
          maxFeePerGas,
          maxPriorityFeePerGas: 1_000_000_000n,
        }),
      );
    }
    // send in nonce order per account: ordered groups, concurrency across accounts
    const anvilCpu0 = cpuMs(node.process.pid);
    const t0 = performance.now();
    const byAccount = Array.from(
      { length: ACCOUNTS },
      (_, a) => raws.filter((_, i) => i % ACCOUNTS === a),
    );
    await pool(
      Math.min(CONCURRENCY, ACCOUNTS),
      byAccount.map((list) => async () => {
        for (const raw of list) {
          await client.request({ method: "eth_sendRawTransaction", params: [raw] });
        }
      }),
    );
    await pool(
      CONCURRENCY,
      raws.map((raw) => async () => {
        const hash = keccak256(raw);
        for (;;) {
          const r = await client.getTransactionReceipt({ hash }).catch(() => undefined);
          if (r) {
            if (r.status !== "success") throw new Error(`baseline transfer ${hash} reverted`);
            return;
          }
          await new Promise((res) => setTimeout(res, 20));
        }
      }),
    );
    const ms = performance.now() - t0;
    return { ms, anvilCpuMs: cpuMs(node.process.pid) - anvilCpu0 };
  } finally {
    await node.stop();
  }
}

async function throughEmulator(): Promise<
  { ms: number; polls: number; emulatorCpuMs: number; clientCpuMs: number; anvilCpuMs: number }
> {
  const node = await startAnvil();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${ROOT}main.ts`,
      "emulator",
      "--rpcUrl",
      node.url,
      "--vaultAccounts",
      String(ACCOUNTS),
    ],
    stdout: "piped",
    stderr: "null",
    env: { RUST_BACKTRACE: "0" },
  }).spawn();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    while (!buf.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the emulator did not start");
      buf += value;
    }
    (async () => {
      while (!(await reader.read()).done) { /* drain */ }
    })().catch(() => {});
    const ready = JSON.parse(buf.slice(0, buf.indexOf("\n")));
    const client = new PlatformClient(
      await loadCredentials({
        apiKey: ready.apiKey,
        privateKey: ready.privateKeyPath,
        apiBaseUrl: ready.apiBaseUrl,
      }),
      { retries: 2, timeoutMs: 60_000 },
    );
    const assetId = `ETH_TEST_${await createPublicClient({ transport: http(node.url) })
      .getChainId()}`;
    const to = destinations();
    let polls = 0;
    const cpu0 = [cpuMs(child.pid), cpuMs("self"), cpuMs(node.process.pid)];
    const t0 = performance.now();
    await pool(
      CONCURRENCY,
      to.map((address, i) => async () => {
        const { data } = await client.request<{ id: string }>("POST", "/v1/transactions", {
          operation: "create transfer",
          body: {
            operation: "TRANSFER",
            assetId,
            source: { type: "VAULT_ACCOUNT", id: String(i % ACCOUNTS) },
            destination: { type: "ONE_TIME_ADDRESS", oneTimeAddress: { address } },
            amount: "0.001",
          },
        });
        for (;;) {
          await new Promise((res) => setTimeout(res, 20));
          polls++;
          const t = await client.request<{ status: string; subStatus: string }>(
            "GET",
            `/v1/transactions/${data.id}`,
            { operation: "get transaction" },
          );
          if (t.data.status === "COMPLETED") return;
          if (["FAILED", "CANCELLED", "REJECTED", "BLOCKED", "TIMEOUT"].includes(t.data.status)) {
            throw new Error(`transfer ${data.id} ended ${t.data.status} (${t.data.subStatus})`);
          }
        }
      }),
    );
    const ms = performance.now() - t0;
    const cpu1 = [cpuMs(child.pid), cpuMs("self"), cpuMs(node.process.pid)];
    return {
      ms,
      polls,
      emulatorCpuMs: cpu1[0] - cpu0[0],
      clientCpuMs: cpu1[1] - cpu0[1],
      anvilCpuMs: cpu1[2] - cpu0[2],
    };
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await node.stop();
  }
}

const rounds: {
  base: Awaited<ReturnType<typeof baseline>>;
  emu: Awaited<ReturnType<typeof throughEmulator>>;
}[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const base = await baseline();
  const emu = await throughEmulator();
  rounds.push({ base, emu });
  console.error(
    `round ${r + 1}: baseline ${Math.round(base.ms)} ms, through the emulator ${
      Math.round(emu.ms)
    } ms`,
  );
}
rounds.sort((a, b) => a.emu.ms / a.base.ms - b.emu.ms / b.base.ms);
const { base, emu } = rounds[Math.floor(rounds.length / 2)];
const result = {
  rounds: ROUNDS,
  count: COUNT,
  concurrency: CONCURRENCY,
  baselineMs: Math.round(base.ms),
  baselineTxPerSec: Math.round((COUNT / base.ms) * 1000 * 10) / 10,
  emulatorMs: Math.round(emu.ms),
  emulatorTxPerSec: Math.round((COUNT / emu.ms) * 1000 * 10) / 10,
  emulatorShare: Math.round(((emu.ms - base.ms) / emu.ms) * 1000) / 1000,
  slowdownRatio: Math.round((emu.ms / base.ms) * 100) / 100,
  /** Emulator throughput over the baseline's (issue 15's target: at least 0.5). */
  ratio: Math.round((base.ms / emu.ms) * 100) / 100,
  statusPolls: emu.polls,
  cpuMs: {
    baselineAnvil: Math.round(base.anvilCpuMs),
    emulatorProcess: Math.round(emu.emulatorCpuMs),
    clientProcess: Math.round(emu.clientCpuMs),
    anvil: Math.round(emu.anvilCpuMs),
  },
};
console.log(
  `${COUNT} transfers: straight to anvil ${result.baselineMs} ms (${result.baselineTxPerSec} tx/s); ` +
    `through the emulator ${result.emulatorMs} ms (${result.emulatorTxPerSec} tx/s, create + poll until COMPLETED); ` +
    `emulator share of the time ${
      (result.emulatorShare * 100).toFixed(1)
    }% (${result.ratio}x the baseline's throughput)`,
);
console.log(JSON.stringify(result));
