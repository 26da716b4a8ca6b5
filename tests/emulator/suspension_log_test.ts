/**
 * The emulator's suspension log line counts in plain English: `1 error in 1
 * attempt`, `e-mailed 1 admin` (it said `1 errors in 1 attempts`). One failed
 * delivery suspends an endpoint when `--minAttempts 1`; the receiver refuses
 * every connection (a closed port).
 */
import assert from "node:assert/strict";
import { startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";

Deno.test("one error in one attempt suspends (--minAttempts 1) and the log says so in the singular", async () => {
  const emu = await startEmulatorOnAnvil(["--minAttempts", "1", "--timeScale", "1000"]);
  try {
    const made = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: "http://127.0.0.1:9/closed", events: ["transaction.created"] },
    });
    assert.equal(made.status, 201);
    const r = await emu.api("POST", "/admin/notifications", {
      body: { eventType: "transaction.created" },
    });
    assert.equal(r.status, 201);
    await waitFor("the suspension log line", () => emu.stderr().includes(" SUSPENDED "), 10_000);
    assert.match(
      emu.stderr(),
      new RegExp(
        `webhook ${made.data.id} SUSPENDED \\(immediate\\) at \\S+: 1 error in 1 attempt of the window; e-mailed 1 admin\\n`,
      ),
    );
  } finally {
    await emu.stop();
  }
});
