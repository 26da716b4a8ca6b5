/**
 * `service webhooks create|update|delete` against the real emulator process
 * (on a real anvil), the CLI spawned as a user would run it: output, exit
 * codes (cli.md) and what the platform then holds, read back through the API.
 */
import assert from "node:assert/strict";
import { runCli } from "../support/tools.ts";
import { type EmulatorProcess, startEmulatorOnAnvil } from "../support/emulator_process.ts";

function env(emu: EmulatorProcess): Record<string, string> {
  return {
    SERVICE_API_KEY: emu.ready.apiKey,
    SERVICE_API_PRIVATE_KEY_PATH: emu.ready.privateKeyPath,
    SERVICE_API_BASE_URL: emu.ready.apiBaseUrl,
  };
}

interface Hook {
  id: string;
  url: string;
  events: string[];
  status: string;
  description?: string;
}

Deno.test("webhooks create, update and delete: what they print, their exit codes, what the platform then holds", async (t) => {
  const emu = await startEmulatorOnAnvil();
  const cli = (args: string[]) => runCli(["webhooks", ...args], { env: env(emu) });
  try {
    let hook: Hook;
    await t.step("create --format json prints the new webhook, ENABLED", async () => {
      const r = await cli([
        "create",
        "--url",
        "http://127.0.0.1:9/hook",
        "--events",
        "transaction.created,transaction.status.updated",
        "--description",
        "dev box",
        "--format",
        "json",
      ]);
      assert.deepEqual(r.code, 0, r.stderr);
      hook = JSON.parse(r.stdout);
      assert.deepEqual(hook.status, "ENABLED");
      assert.deepEqual(hook.events, ["transaction.created", "transaction.status.updated"]);
      assert.deepEqual(hook.description, "dev box");
      const got = await emu.api<Hook>("GET", `/v1/webhooks/${hook.id}`);
      assert.deepEqual(got.status, 200);
      assert.deepEqual(got.data.url, "http://127.0.0.1:9/hook");
    });

    await t.step(
      "create --disabled makes a DISABLED endpoint; the table output names it",
      async () => {
        const r = await cli([
          "create",
          "--url",
          "https://example.com/h",
          "--events",
          "vault_account.asset.balance_updated",
          "--disabled",
          "--format",
          "table",
        ]);
        assert.deepEqual(r.code, 0, r.stderr);
        assert.match(r.stdout, /^status:\s+DISABLED$/m);
        const id = r.stdout.match(/^id:\s+(\S+)$/m)![1];
        assert.deepEqual(
          (await emu.api<Hook>("GET", `/v1/webhooks/${id}`)).data.status,
          "DISABLED",
        );
      },
    );

    await t.step(
      "create refuses a bad URL or no events with exit 2, before sending anything",
      async () => {
        const before = (await emu.api<{ data: Hook[] }>("GET", "/v1/webhooks", {
          query: { pageSize: 100 },
        })).data.data.length;
        for (
          const [args, re] of [
            [
              ["create", "--url", "not a url", "--events", "vault_account.asset.balance_updated"],
              /--url.*not a URL/,
            ],
            [
              ["create", "--url", "ftp://x/h", "--events", "vault_account.asset.balance_updated"],
              /not http/,
            ],
            [["create", "--url", "https://x/h"], /Missing --events/],
            [["create", "--events", "vault_account.asset.balance_updated"], /Missing --url/],
          ] as [string[], RegExp][]
        ) {
          const r = await cli(args);
          assert.deepEqual(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
          assert.match(r.stderr, re);
        }
        const after = (await emu.api<{ data: Hook[] }>("GET", "/v1/webhooks", {
          query: { pageSize: 100 },
        })).data.data.length;
        assert.deepEqual(after, before);
      },
    );

    await t.step("update changes only the fields given", async () => {
      const r = await cli([
        "update",
        "--webhookId",
        hook.id,
        "--events",
        "vault_account.created",
        "--enabled",
        "false",
        "--format",
        "json",
      ]);
      assert.deepEqual(r.code, 0, r.stderr);
      const got = (await emu.api<Hook>("GET", `/v1/webhooks/${hook.id}`)).data;
      assert.deepEqual(got.events, ["vault_account.created"]);
      assert.deepEqual(got.status, "DISABLED");
      assert.deepEqual(got.url, "http://127.0.0.1:9/hook");
      assert.deepEqual(got.description, "dev box");
      const r2 = await cli([
        "update",
        "--webhookId",
        hook.id,
        "--url",
        "http://127.0.0.1:9/other",
        "--description",
        "renamed",
        "--enabled=true",
      ]);
      assert.deepEqual(r2.code, 0, r2.stderr);
      const got2 = (await emu.api<Hook>("GET", `/v1/webhooks/${hook.id}`)).data;
      assert.deepEqual(
        [got2.url, got2.description, got2.status, got2.events],
        ["http://127.0.0.1:9/other", "renamed", "ENABLED", ["vault_account.created"]],
      );
    });

    await t.step("update with nothing to change, or an unknown id", async () => {
      const r = await cli(["update", "--webhookId", hook.id]);
      assert.deepEqual(r.code, 2);
      assert.match(r.stderr, /Nothing to change/);
      const r404 = await cli(["update", "--webhookId", crypto.randomUUID(), "--description", "x"]);
      assert.deepEqual(r404.code, 4, r404.stderr);
    });

    await t.step(
      "delete without a terminal and without --yes is a usage error and deletes nothing",
      async () => {
        const r = await cli(["delete", "--webhookId", hook.id]);
        assert.deepEqual(r.code, 2);
        assert.match(r.stderr, /add --yes/);
        assert.deepEqual((await emu.api("GET", `/v1/webhooks/${hook.id}`)).status, 200);
      },
    );

    await t.step("delete --yes deletes it; a second delete is not found (exit 4)", async () => {
      const r = await cli(["delete", "--webhookId", hook.id, "--yes", "--format", "table"]);
      assert.deepEqual(r.code, 0, r.stderr);
      assert.deepEqual(r.stdout, `${hook.id}: deleted\n`);
      assert.deepEqual((await emu.api("GET", `/v1/webhooks/${hook.id}`)).status, 404);
      const again = await cli(["delete", "--webhookId", hook.id, "--yes", "--format", "json"]);
      assert.deepEqual(again.code, 4, again.stderr);
      assert.ok(!again.stderr.includes(emu.ready.apiKey), "no secret in the error");
    });
  } finally {
    await emu.stop();
  }
});
