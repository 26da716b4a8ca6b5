/**
 * `--webhookId` is declared once (`lib/cli/webhooks/common.ts`) and is
 * `required`: every command that takes it refuses its absence in the flag
 * layer, with exit 2 and the same words naming the flag and its variable,
 * before anything else (no credentials are needed to be told). `--help`
 * still works without it.
 */

import assert from "node:assert/strict";
import { run } from "../../lib/cli/mod.ts";
import { memoryIo } from "../support/memory_io.ts";

const WITH_WEBHOOK_ID: string[][] = [
  ["webhooks", "get"],
  ["webhooks", "enable"],
  ["webhooks", "disable"],
  ["webhooks", "metrics"],
  ["webhooks", "update"],
  ["webhooks", "delete"],
  ["notifications", "list"],
  ["notifications", "get"],
  ["notifications", "attempts"],
  ["notifications", "resend"],
  ["notifications", "resend-by-resource"],
  ["notifications", "resend-failed"],
  ["notifications", "resend-all"],
  ["notifications", "tail"],
];

Deno.test("every command with --webhookId refuses its absence the same way: exit 2, the flag and its variable", async () => {
  for (const words of WITH_WEBHOOK_ID) {
    for (const extra of [[], ["--webhookId="]]) {
      const io = memoryIo();
      const code = await run([...words, ...extra, "--noEnvFile"], { io });
      const what = [...words, ...extra].join(" ");
      assert.deepEqual(code, 2, `${what}: ${io.err()}`);
      assert.deepEqual(
        io.err(),
        `error: Missing --webhookId for "service ${
          words.join(" ")
        }": give --webhookId <ID> or set SERVICE_WEBHOOK_ID.\n`,
        what,
      );
      assert.deepEqual(io.out(), "", what);
    }
  }
});

Deno.test("--help of a command with a required flag works without it and marks it required", async () => {
  for (const words of [["webhooks", "get"], ["notifications", "list"]]) {
    const io = memoryIo();
    assert.deepEqual(await run([...words, "--help"], { io }), 0);
    assert.deepEqual(
      /--webhookId <ID> +The webhook endpoint's id\. \(required; env SERVICE_WEBHOOK_ID\)/.test(
        io.out(),
      ),
      true,
      io.out(),
    );
  }
});
