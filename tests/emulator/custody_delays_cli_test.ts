/**
 * `--approvalDelay` and `--signingDelay` as a user gives them: malformed
 * values are usage errors (exit 2, one line naming the flag and the form);
 * `service emulator --state FILE` killed during an approval delay resumes it
 * after a restart with the time that remained (the restart is given a delay
 * of one hour: starting the delay again would never finish within the test),
 * while a transaction held by a `hold` fault stays held; and
 * `service rpc --emulator` passes the delays to its in-process emulator, seen
 * through `--logTransactionStatusChanges` around a real `cast send`.
 */

import assert from "node:assert/strict";
import { foundryBin, runCli, startAnvil } from "../support/tools.ts";
import { transfer } from "../support/emulator_fixture.ts";
import { clientForReady, spawnEmulator } from "../support/emulator_process.ts";
import type { PlatformClient } from "../../lib/platform/mod.ts";
import { waitFor } from "../support/wait_for.ts";

const VAULT0 = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const ACCOUNT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const ASSET = "ETH_TEST_31337";

async function get(client: PlatformClient, id: string): Promise<Record<string, unknown>> {
  const { data } = await client.request<Record<string, unknown>>(
    "GET",
    `/v1/transactions/${id}`,
    { operation: "get" },
  );
  return data;
}

async function waitStatus(
  client: PlatformClient,
  id: string,
  ok: (s: string) => boolean,
): Promise<Record<string, unknown>> {
  let t: Record<string, unknown> = {};
  return await waitFor(
    () => `transaction ${id} (stuck: ${JSON.stringify(t)})`,
    async () => {
      t = await get(client, id);
      return ok(String(t.status)) ? t : undefined;
    },
    30_000,
    25,
  );
}

async function create(client: PlatformClient, body: Record<string, unknown>): Promise<string> {
  const r = await client.request<{ id: string }>("POST", "/v1/transactions", {
    operation: "create",
    body,
  });
  return r.data.id;
}

Deno.test("malformed delays are usage errors naming the flag and the form", async () => {
  const cases: [string[], RegExp][] = [
    [["emulator", "--approvalDelay", "soon"], /--approvalDelay: expected a duration such as 90s/],
    [["emulator", "--approvalDelay", "20s-5s"], /--approvalDelay: .*MIN-MAX.*MIN at most MAX/],
    [["emulator", "--signingDelay", "1s-2s-3s"], /--signingDelay: expected a duration/],
    [["emulator", "--signingDelay", "25h"], /--signingDelay: expected durations from 0ms to 1d/],
    [["emulator", "--signingDelay"], /Missing value for --signingDelay/],
    [["rpc", "--emulator", "--approvalDelay", "-5s"], /--approvalDelay/],
    [
      ["rpc", "--rpcUrl", "http://127.0.0.1:9", "--signingDelay", "5s", "--", "true"],
      /--signingDelay applies to the in-process emulator only: add --emulator/,
    ],
  ];
  for (const [args, message] of cases) {
    const r = await runCli([
      ...args,
      ...(args[0] === "emulator" ? ["--rpcUrl", "http://127.0.0.1:9"] : []),
    ]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, message);
  }
});

Deno.test(
  "a restart with --state resumes an approval delay with the time that remained",
  async () => {
    const anvil = await startAnvil();
    const dir = await Deno.makeTempDir({ prefix: "emu-delays-" });
    const base = ["--rpcUrl", anvil.url, "--state", `${dir}/emu.sqlite`];
    let emu = await spawnEmulator([...base, "--approvalDelay", "3s"]);
    try {
      let client = await clientForReady(emu.ready);
      const hold = await fetch(`${emu.ready.adminUrl}/faults`, {
        method: "POST",
        headers: { "X-API-Key": emu.ready.apiKey, "Content-Type": "application/json" },
        body: JSON.stringify({ kind: "hold", count: 1 }),
      });
      assert.equal(hold.status, 201);
      await hold.body?.cancel();
      const held = await create(client, transfer(ASSET, "2", ACCOUNT1, "0.01"));
      await waitStatus(client, held, (s) => s === "PENDING_AUTHORIZATION");
      const delayed = await create(client, transfer(ASSET, "0", ACCOUNT1, "0.01"));
      const authorizing = await waitStatus(client, delayed, (s) => s !== "SUBMITTED");
      assert.equal(authorizing.status, "PENDING_AUTHORIZATION");
      assert.equal((await emu.stop("SIGKILL")).signal, "SIGKILL");

      // an hour now: only the 3 s recorded before the kill can let it go on in time
      emu = await spawnEmulator([...base, "--approvalDelay", "1h", "--signingDelay", "1s"]);
      client = await clientForReady(emu.ready);
      const signing = await waitStatus(client, delayed, (s) => s !== "PENDING_AUTHORIZATION");
      assert.equal(signing.status, "PENDING_SIGNATURE");
      const waited = Number(signing.lastUpdated) - Number(authorizing.lastUpdated);
      assert.ok(waited >= 3000, `left PENDING_AUTHORIZATION after ${waited} ms`);
      assert.equal(
        (await waitStatus(client, delayed, (s) => s === "COMPLETED")).status,
        "COMPLETED",
      );
      // the held one is not subject to any delay: it waits for the admin endpoint
      assert.equal((await get(client, held)).status, "PENDING_AUTHORIZATION");
      const approve = await fetch(`${emu.ready.adminUrl}/transactions/${held}/approve`, {
        method: "POST",
        headers: { "X-API-Key": emu.ready.apiKey },
      });
      assert.equal(approve.status, 200);
      await approve.body?.cancel();
      assert.equal((await waitStatus(client, held, (s) => s === "COMPLETED")).status, "COMPLETED");
      assert.equal((await emu.stop("SIGTERM")).code, 0);
    } finally {
      await emu.stop("SIGKILL").catch(() => {});
      await anvil.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("service rpc --emulator takes the delays: cast send goes through PENDING_AUTHORIZATION", async () => {
  const anvil = await startAnvil();
  try {
    const r = await runCli([
      "rpc",
      "--emulator",
      "--rpcUrl",
      anvil.url,
      "--http",
      "--approvalDelay",
      "300ms",
      // long enough for the bridge's status polls to see it on a loaded machine (100-200 ms was
      // missed once)
      "--signingDelay",
      "400ms-600ms",
      "--logTransactionStatusChanges",
      "--",
      foundryBin("cast"),
      "send",
      "--unlocked",
      "--from",
      VAULT0,
      ACCOUNT1,
      "--value",
      "1",
      "--rpc-url",
      "{}",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const statuses = [...r.stderr.matchAll(/platform transaction \S+: ([A-Z_]+)/g)].map((m) =>
      m[1]
    );
    const order = ["PENDING_AUTHORIZATION", "PENDING_SIGNATURE", "COMPLETED"];
    const seen = statuses.filter((s) => order.includes(s));
    assert.deepEqual([...new Set(seen)], order, r.stderr);
  } finally {
    await anvil.stop();
  }
});
