/**
 * The emulator's one error mapping (`lib/emulator/http/handler.ts`), driven
 * in-process through the real handler, router, store and fault rules: the
 * domain errors become 400/404 with their message, and an unexpected error
 * (a RangeError or SyntaxError from a bug included) is a 500 that carries
 * the request id and is logged, never a 400. The context is a partial one
 * (only what the handler reads; the routes here are test routes).
 */

import assert from "node:assert/strict";
import { BadRequestError, ConflictError, NotFoundError } from "../../lib/core/mod.ts";
import { createHandler } from "../../lib/emulator/http/handler.ts";
import type { Route } from "../../lib/emulator/http/router.ts";
import { Store } from "../../lib/emulator/store.ts";
import { Faults } from "../../lib/emulator/faults/faults.ts";
import type { EmulatorContext } from "../../lib/emulator/context.ts";

function throwing(path: string, error: unknown): Route {
  return {
    method: "GET",
    pattern: path,
    auth: "none",
    handle: () => {
      throw error;
    },
  };
}

Deno.test("domain errors are answered 400/404; an unexpected error is a 500 with the request id, logged", async () => {
  const store = Store.open();
  const logs: string[] = [];
  let ids = 0;
  const ctx = {
    store,
    faults: new Faults(),
    now: () => Date.now(),
    uuid: () => `req-${++ids}`,
    log: (l: string) => logs.push(l),
    config: { maxBodyBytes: 1 << 20, logRequests: false },
    apiUsers: [],
  } as unknown as EmulatorContext;
  const handle = createHandler(ctx, [{
    name: "test",
    routes: [
      throwing("/bad", new BadRequestError("limit must be an integer from 1 to 500.")),
      throwing("/missing", new NotFoundError(`Webhook "w1" not found.`)),
      throwing("/clash", new ConflictError(`externalTxId "x" was already used.`)),
      throwing("/range", new RangeError("Invalid array length")),
      throwing("/syntax", new SyntaxError("Unexpected token")),
      throwing("/type", new TypeError("x is undefined")),
    ],
  }]);
  const get = async (path: string) => {
    const r = await handle(new Request(`http://127.0.0.1${path}`));
    return { status: r.status, id: r.headers.get("x-request-id"), body: await r.json() };
  };
  try {
    assert.deepEqual((await get("/bad")).body, {
      message: "limit must be an integer from 1 to 500.",
      code: 1000,
    });
    assert.equal((await get("/bad")).status, 400);
    const missing = await get("/missing");
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { message: `Webhook "w1" not found.`, code: 1003 });
    const clash = await get("/clash");
    assert.equal(clash.status, 400);
    assert.equal(clash.body.code, 1009);
    assert.equal(logs.length, 0, "an answered domain error is not an internal error");

    for (const path of ["/range", "/syntax", "/type"]) {
      const r = await get(path);
      assert.equal(r.status, 500, path);
      assert.equal(r.body.code, 1500);
      assert.ok(r.id, "the answer has a request id");
      assert.ok(
        r.body.message.includes(r.id!),
        `the message names the request id: ${r.body.message}`,
      );
      assert.ok(
        !r.body.message.includes("Unexpected token"),
        "no internal detail reaches the client",
      );
      const line = logs.find((l) => l.includes(r.id!));
      assert.ok(line?.includes(`GET ${path}`), `logged with its request id: ${logs.join("\n")}`);
    }
  } finally {
    store.close();
  }
});
