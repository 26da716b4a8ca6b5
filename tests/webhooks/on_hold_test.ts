import assert from "node:assert/strict";
import { waitingStatus } from "../../lib/webhooks/on_hold.ts";

Deno.test("a notification still to deliver waits ON_HOLD unless its endpoint is ENABLED", () => {
  assert.equal(waitingStatus("IN_PROGRESS", "ENABLED"), "IN_PROGRESS");
  assert.equal(waitingStatus("ON_HOLD", "ENABLED"), "IN_PROGRESS");
  for (const endpoint of ["SUSPENDED", "DISABLED", undefined] as const) {
    assert.equal(waitingStatus("IN_PROGRESS", endpoint), "ON_HOLD", String(endpoint));
  }
});

Deno.test("a finished notification keeps its status whatever the endpoint", () => {
  for (const status of ["COMPLETED", "FAILED"] as const) {
    assert.equal(waitingStatus(status, "SUSPENDED"), status);
    assert.equal(waitingStatus(status, "ENABLED"), status);
  }
});
