/**
 * Custody delays (`approvalDelay`, `signingDelay`) on a real anvil and an
 * in-process emulator: the statuses a transaction goes through, in order,
 * with the time each status began read from the transaction's own record
 * (`lastUpdated` of each `transaction.status.updated` event), never from the
 * test's clock. A later transaction created with the same delay finishing is
 * what shows that an earlier one's (cleared) timer would have fired by then.
 *
 * Seen to fail: with `approvalOver` answering "over" at once, the steps see
 * no gap; without `moved()` clearing the timer of a stage left, or without
 * the engine's stop clearing them all, the test sanitizers report a leaked
 * timer.
 */

import assert from "node:assert/strict";
import { type Anvil, startAnvil } from "../support/tools.ts";
import { type Fixture, startFixture, transfer } from "../support/emulator_fixture.ts";
import {
  CustodyDelays,
  delayRange,
  drawDelay,
} from "../../lib/emulator/transactions/custody_delays.ts";
import { Store } from "../../lib/emulator/store.ts";
import {
  type DelayOption,
  EmulatorConfigError,
  type EmulatorEvent,
  startEmulator,
} from "../../lib/emulator/mod.ts";
import { BaseError } from "../../lib/core/mod.ts";

const ACCOUNT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const APPROVAL_MS = 300;
const SIGNING_MS = 200;

/** Each transaction's statuses as its events said, with the time each began (`lastUpdated`). */
class Seen {
  readonly byId = new Map<string, { status: string; at: number }[]>();
  sink = (e: EmulatorEvent) => {
    if (!e.resourceId?.length || !e.eventType.startsWith("transaction.")) return;
    const t = e.data as { status: string; lastUpdated: number };
    const list = this.byId.get(e.resourceId) ?? [];
    list.push({ status: t.status, at: Number(t.lastUpdated) });
    this.byId.set(e.resourceId, list);
  };
  statuses(id: string): string[] {
    return (this.byId.get(id) ?? []).map((s) => s.status);
  }
  /** When `id` entered `status` (its first time). */
  at(id: string, status: string): number {
    const s = this.byId.get(id)?.find((x) => x.status === status);
    assert.ok(s, `${id} never was ${status}: ${this.statuses(id).join(" -> ")}`);
    return s.at;
  }
}

function message(): Record<string, unknown> {
  return {
    operation: "TYPED_MESSAGE",
    assetId: "ETH_TEST_31337",
    source: { type: "VAULT_ACCOUNT", id: "3" },
    extraParameters: {
      rawMessageData: { messages: [{ type: "ETH_MESSAGE", content: "48656c6c6f" }] },
    },
  };
}

async function create(fx: Fixture, body: Record<string, unknown>): Promise<string> {
  const r = await fx.api<{ id: string }>("POST", "/v1/transactions", { body });
  assert.equal(r.status, 200, JSON.stringify(r.data));
  return r.data.id;
}

const is = (...statuses: string[]) => (t: Record<string, unknown>) =>
  statuses.includes(String(t.status));

Deno.test("a delay option is checked, and a range draws within its bounds", async () => {
  assert.equal(delayRange("approvalDelay", undefined), undefined);
  assert.equal(delayRange("approvalDelay", 0), undefined);
  assert.deepEqual(delayRange("approvalDelay", 90_000), { minMs: 90_000, maxMs: 90_000 });
  assert.deepEqual(delayRange("signingDelay", { minMs: 5, maxMs: 20 }), { minMs: 5, maxMs: 20 });
  // a domain error on the one base (exit 2 in the CLI), never a RangeError
  for (
    const [name, bad, why] of [
      ["approvalDelay", -1, /^Invalid --approvalDelay: expected milliseconds/],
      ["approvalDelay", 25 * 3_600_000, /from 0 to 86400000/],
      ["signingDelay", { minMs: 20, maxMs: 5 }, /^Invalid --signingDelay: expected minMs at most/],
    ] as const
  ) {
    assert.throws(() => delayRange(name, bad as DelayOption), (x: unknown) => {
      assert.ok(x instanceof EmulatorConfigError && x instanceof BaseError, String(x));
      assert.match((x as Error).message, why);
      return true;
    });
  }
  const range = { minMs: 5000, maxMs: 20000 };
  assert.equal(drawDelay(range, () => 0), 5000);
  assert.equal(drawDelay(range, () => 0.5), 12500);
  assert.equal(drawDelay(range, () => 0.9999999), 20000);
  for (let i = 0; i < 200; i++) {
    const d = drawDelay({ minMs: 1.5, maxMs: 3.5 });
    assert.ok(d >= 1.5 && d <= 4 && Number.isInteger(d), String(d));
  }
  // the emulator refuses them before it reaches the node
  await assert.rejects(
    startEmulator({ rpcUrl: "http://127.0.0.1:9", signingDelay: { minMs: 9, maxMs: 1 } }),
    (e) => e instanceof EmulatorConfigError && /Invalid --signingDelay: expected/.test(e.message),
  );
});

Deno.test({
  name: "leaving a stage or stopping clears its timer (else the ops sanitizer sees it leak)",
  sanitizeOps: true, // off by default in Deno 2.9: a timer left running fails this test
  fn() {
    const store = Store.open();
    const woken: string[] = [];
    const options = {
      store,
      now: Date.now,
      log: () => {},
      approval: { minMs: 60_000, maxMs: 60_000 },
      signing: { minMs: 60_000, maxMs: 60_000 },
    };
    try {
      const now = Date.now();
      // left its stage (cancelled): the timer is cleared without any stop
      const left = new CustodyDelays(options);
      left.startApproval("a", now);
      assert.equal(left.approvalOver("a", () => woken.push("a")), false);
      left.moved("a", "CANCELLED");
      // no recorded delay: held by a fault, waits for the admin
      assert.equal(left.approvalOver("held", () => woken.push("held")), false);
      // still in its stage: the timer stays until the stop
      const stopped = new CustodyDelays(options);
      assert.equal(stopped.signingOver("b", now, () => woken.push("b")), false);
      stopped.moved("b", "PENDING_SIGNATURE");
      assert.equal(stopped.signingOver("past", now - 60_001, () => woken.push("past")), true);
      stopped.stop();
      assert.deepEqual(woken, []);
    } finally {
      store.close();
    }
  },
});

Deno.test({
  name: "custody delays on a real chain",
  // off by default in Deno 2.9: a delay timer left running after the stop fails this test
  sanitizeOps: true,
  fn: async (t) => {
    const anvil: Anvil = await startAnvil();
    const seen = new Seen();
    const fx = await startFixture(
      { approvalDelay: APPROVAL_MS, signingDelay: SIGNING_MS, events: seen.sink },
      anvil,
    );
    const asset = fx.emu.assetId;
    try {
      await t.step(
        "a transfer waits the approval delay in PENDING_AUTHORIZATION, then the signing delay",
        async () => {
          const id = await create(fx, transfer(asset, "0", ACCOUNT1, "0.01"));
          const done = await fx.waitTx(id);
          assert.equal(done.status, "COMPLETED");
          assert.deepEqual(seen.statuses(id), [
            "SUBMITTED",
            "PENDING_AUTHORIZATION",
            "PENDING_SIGNATURE",
            "BROADCASTING",
            "CONFIRMING",
            "COMPLETED",
          ]);
          const authorized = seen.at(id, "PENDING_AUTHORIZATION");
          const signing = seen.at(id, "PENDING_SIGNATURE");
          const signed = seen.at(id, "BROADCASTING");
          assert.ok(
            signing - authorized >= APPROVAL_MS,
            `approved after ${signing - authorized} ms`,
          );
          assert.ok(signed - signing >= SIGNING_MS, `signed after ${signed - signing} ms`);
        },
      );

      await t.step("a TYPED_MESSAGE waits the same two delays", async () => {
        const id = await create(fx, message());
        const done = await fx.waitTx(id);
        assert.equal(done.status, "COMPLETED");
        assert.equal((done.signedMessages as unknown[]).length, 1);
        assert.deepEqual(seen.statuses(id), [
          "SUBMITTED",
          "PENDING_AUTHORIZATION",
          "PENDING_SIGNATURE",
          "COMPLETED",
        ]);
        const signing = seen.at(id, "PENDING_SIGNATURE");
        assert.ok(signing - seen.at(id, "PENDING_AUTHORIZATION") >= APPROVAL_MS);
        assert.ok(seen.at(id, "COMPLETED") - signing >= SIGNING_MS);
      });

      await t.step(
        "a cancel during the approval delay ends it; its timer does nothing",
        async () => {
          const id = await create(fx, transfer(asset, "1", ACCOUNT1, "0.01"));
          await fx.waitTx(id, is("PENDING_AUTHORIZATION"));
          assert.equal((await fx.api("POST", `/v1/transactions/${id}/cancel`)).status, 200);
          // created later with the same delay: once it is past its approval, the cancelled one's
          // delay is over too
          const later = await create(fx, transfer(asset, "2", ACCOUNT1, "0.01"));
          await fx.waitTx(later);
          assert.deepEqual(seen.statuses(id), ["SUBMITTED", "PENDING_AUTHORIZATION", "CANCELLED"]);
          assert.equal((await fx.waitTx(id)).status, "CANCELLED");
          assert.ok(
            !fx.logs.some((l) => l.includes(id) && /error|cannot go/i.test(l)),
            fx.logs.join("\n"),
          );
        },
      );

      await t.step("a status forced during the signing delay ends it", async () => {
        const id = await create(fx, transfer(asset, "4", ACCOUNT1, "0.01"));
        await fx.waitTx(id, is("PENDING_SIGNATURE"));
        const forced = await fx.admin("POST", `/transactions/${id}/status`, { status: "FAILED" });
        assert.equal(forced.status, 200);
        const later = await create(fx, transfer(asset, "5", ACCOUNT1, "0.01"));
        await fx.waitTx(later);
        assert.deepEqual(seen.statuses(id), [
          "SUBMITTED",
          "PENDING_AUTHORIZATION",
          "PENDING_SIGNATURE",
          "FAILED",
        ]);
      });

      await t.step(
        "a hold fault still holds despite the approval delay; after approval the signing delay applies",
        async () => {
          assert.equal((await fx.admin("POST", "/faults", { kind: "hold", count: 1 })).status, 201);
          const held = await create(fx, transfer(asset, "6", ACCOUNT1, "0.01"));
          await fx.waitTx(held, is("PENDING_AUTHORIZATION"));
          const later = await create(fx, transfer(asset, "7", ACCOUNT1, "0.01"));
          await fx.waitTx(later);
          assert.equal(
            (await fx.api("GET", `/v1/transactions/${held}`)).data.status,
            "PENDING_AUTHORIZATION",
          );
          assert.ok(!fx.logs.some((l) => l.startsWith(`transaction ${held} waits`)));
          const approved = await fx.admin("POST", `/transactions/${held}/approve`);
          assert.equal(approved.status, 200);
          assert.equal((await fx.waitTx(held)).status, "COMPLETED");
          const signing = seen.at(held, "PENDING_SIGNATURE");
          assert.ok(seen.at(held, "BROADCASTING") - signing >= SIGNING_MS);
        },
      );

      await t.step(
        "an admin approval during the approval delay lets it go on at once",
        async () => {
          const id = await create(fx, transfer(asset, "8", ACCOUNT1, "0.01"));
          await fx.waitTx(id, is("PENDING_AUTHORIZATION"));
          assert.equal((await fx.admin("POST", `/transactions/${id}/approve`)).status, 200);
          assert.equal((await fx.waitTx(id)).status, "COMPLETED");
          assert.deepEqual(seen.statuses(id), [
            "SUBMITTED",
            "PENDING_AUTHORIZATION",
            "PENDING_SIGNATURE",
            "BROADCASTING",
            "CONFIRMING",
            "COMPLETED",
          ]);
          assert.ok(seen.at(id, "BROADCASTING") - seen.at(id, "PENDING_SIGNATURE") >= SIGNING_MS);
        },
      );
    } finally {
      await fx.stop();
    }

    await t.step({
      name: "stopping with a delay running clears its timer",
      sanitizeOps: true, // the one-minute timer would outlive this step
      fn: async () => {
        const fx3 = await startFixture({ approvalDelay: 60_000 }, anvil);
        try {
          const id = await create(fx3, transfer(asset, "9", ACCOUNT1, "0.01"));
          await fx3.waitTx(id, is("PENDING_AUTHORIZATION")); // its timer runs now
        } finally {
          await fx3.stop();
        }
      },
    });

    await t.step("a range draws each transaction's delay within its bounds", async () => {
      const ranged = new Seen();
      const fx2 = await startFixture(
        { approvalDelay: { minMs: 200, maxMs: 400 }, events: ranged.sink },
        anvil,
      );
      try {
        const ids: string[] = [];
        for (let i = 0; i < 4; i++) ids.push(await create(fx2, message()));
        for (const id of ids) assert.equal((await fx2.waitTx(id)).status, "COMPLETED");
        for (const id of ids) {
          const line = fx2.logs.find((l) => l.startsWith(`transaction ${id} waits`));
          const drawn = Number(line?.match(/waits (\d+) ms in PENDING_AUTHORIZATION/)?.[1]);
          assert.ok(drawn >= 200 && drawn <= 400, `${line}`);
          const waited = ranged.at(id, "PENDING_SIGNATURE") -
            ranged.at(id, "PENDING_AUTHORIZATION");
          assert.ok(waited >= drawn, `waited ${waited} ms of ${drawn}`);
        }
      } finally {
        await fx2.stop();
      }
    });
    await anvil.stop();
  },
});
