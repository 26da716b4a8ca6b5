/**
 * API users with roles, as a user meets them: `service emulator --apiUser
 * VIEWER:dash --apiUser SIGNER:ci` (the real process; its ready line lists
 * the users), then the project's own clients with each user's key:
 * `service rpc` with the VIEWER's key answers `eth_sendTransaction` with an
 * error saying that the key may not send (its role, what it may do), while
 * the SIGNER's bridge sends; `service webhooks create` with the VIEWER's or
 * the SIGNER's key exits 3 with words naming the role.
 */

import assert from "node:assert/strict";
import { runCli } from "../support/tools.ts";
import { startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { type BridgeProcess, httpRpc, startBridgeProcess } from "../support/rpc.ts";
import { VAULT0, VAULT1 } from "../support/rpc_stack.ts";

Deno.test("a VIEWER's key: the bridge says it may not send, the CLI exits 3 naming the role", async () => {
  const emu = await startEmulatorOnAnvil(["--apiUser", "VIEWER:dash", "--apiUser", "signer:ci"]);
  const bridges: BridgeProcess[] = [];
  try {
    const users = emu.ready.apiUsers;
    assert.deepEqual(users.map((u) => [u.name, u.role]), [
      ["default", "ADMIN"],
      ["dash", "VIEWER"],
      ["ci", "SIGNER"],
    ]);
    assert.equal(users[0].apiKey, emu.ready.apiKey);
    assert.ok(
      users.every((u) => Object.keys(u).sort().join() === "apiKey,name,privateKeyPath,role"),
    );
    const [, viewer, signer] = users;
    const flags = (u: typeof viewer) => [
      "--apiKey",
      u.apiKey,
      "--privateKey",
      u.privateKeyPath,
      "--apiBaseUrl",
      emu.ready.apiBaseUrl,
    ];
    const send = async (u: typeof viewer) => {
      const b = await startBridgeProcess([...flags(u), "--rpcUrl", emu.anvil.url, "--http"]);
      bridges.push(b);
      const r = await httpRpc(b.address, {
        jsonrpc: "2.0",
        id: 1,
        method: "eth_sendTransaction",
        params: [{ from: VAULT0, to: VAULT1, value: "0x1" }],
      });
      return r.json() as { result?: string; error?: { code: number; message: string } };
    };

    const refused = await send(viewer);
    assert.ok(refused.error, JSON.stringify(refused));
    assert.match(refused.error.message, /answered 403/);
    assert.match(
      refused.error.message,
      /API user dash is a VIEWER and may not call POST \/v1\/transactions/,
    );
    assert.match(refused.error.message, /A VIEWER may only read/);
    assert.match(refused.error.message, /role may not make this call/);
    assert.ok(!refused.error.message.includes(viewer.apiKey));

    const sent = await send(signer);
    assert.match(String(sent.result), /^0x[0-9a-f]{64}$/, JSON.stringify(sent));

    for (const u of [viewer, signer]) {
      const r = await runCli([
        "webhooks",
        "create",
        ...flags(u),
        "--url",
        "http://127.0.0.1:9/hook",
        "--events",
        "transaction.created",
      ]);
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stderr, new RegExp(`is a ${u.role} and may not call POST /v1/webhooks`));
      assert.match(r.stderr, /needs ADMIN or NON_SIGNING_ADMIN\./);
      assert.ok(!r.stderr.includes(u.apiKey) && !r.stdout.includes(u.apiKey));
    }
  } finally {
    await Promise.all(bridges.map((b) => b.stop()));
    await emu.stop();
  }
});
