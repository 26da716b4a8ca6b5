/**
 * A real browser (Debian chromium driven by playwright-core) opens a page
 * served on another local port; the page's script POSTs eth_sendTransaction
 * to the bridge's HTTP address, both as a CORS request and as a "simple"
 * no-cors request that needs no preflight, and opens the same address as a
 * WebSocket. The bridge refuses all three (Origin check; the WebSocket before
 * the upgrade completes) and nothing reaches the platform.
 */
import assert from "node:assert/strict";
import type { BridgeProcess } from "../support/rpc.ts";
import { anvilCall, type Stack, startStack, VAULT0 } from "../support/rpc_stack.ts";
import { waitFor } from "../support/wait_for.ts";
import { loadCredentials, PlatformClient } from "../../lib/platform/mod.ts";
import { assertPeer } from "../support/required.ts";
import {
  type Browser,
  CHROMIUM,
  haveChromium,
  launchChromium,
  skipBrowser,
} from "../support/browser.ts";

Deno.test({
  name: "a web page cannot make the bridge send: refused, nothing signed",
  ignore: skipBrowser,
  async fn() {
    assertPeer(`chromium (${CHROMIUM})`, haveChromium);
    // The real stack: anvil + the emulator (the platform) + the bridge.
    const stack: Stack = await startStack();
    const client = new PlatformClient(
      await loadCredentials({
        apiKey: stack.emulator.apiKey,
        privateKey: stack.emulator.privateKeyPath,
        apiBaseUrl: stack.emulator.apiBaseUrl,
      }),
    );
    const countTransactions = async () => {
      const { data } = await client.request("GET", "/v1/transactions", {
        operation: "list transactions",
        query: { limit: 500 },
      });
      return (Array.isArray(data) ? data : (data as { data?: unknown[] }).data ?? []).length;
    };
    const txBefore = await countTransactions();
    const nonceBefore = await anvilCall(stack.anvil.url, "eth_getTransactionCount", [
      VAULT0,
      "latest",
    ]);
    let bridge: BridgeProcess | undefined;
    const page = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
      new Response(
        `<!doctype html><html><body><script>
        const target = new URLSearchParams(location.search).get("bridge");
        const body = JSON.stringify({jsonrpc:"2.0", id:1, method:"eth_sendTransaction",
          params:[{from:"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", to:"0x70997970C51812dc3A010C7d01b50e0d17dc79C8", value:"0x1"}]});
        window.results = {};
        (async () => {
          try {
            const r = await fetch(target, {method:"POST", headers:{"content-type":"application/json"}, body});
            window.results.cors = "status " + r.status + " " + await r.text();
          } catch (e) { window.results.cors = "blocked: " + e.message; }
          try {
            const r = await fetch(target, {method:"POST", mode:"no-cors", headers:{"content-type":"text/plain"}, body});
            window.results.simple = "opaque " + r.type;
          } catch (e) { window.results.simple = "blocked: " + e.message; }
          // the same address as a WebSocket: refused before the upgrade completes
          window.results.ws = await new Promise((resolve) => {
            const ws = new WebSocket(target.replace(/^http:/, "ws:"));
            let opened = false;
            ws.onopen = () => {
              opened = true;
              ws.send(JSON.stringify({jsonrpc:"2.0", id:2, method:"eth_sendTransaction",
                params:[{from:"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", to:"0x70997970C51812dc3A010C7d01b50e0d17dc79C8", value:"0x1"}]}));
            };
            ws.onmessage = (e) => resolve("answered " + e.data);
            ws.onclose = (e) => resolve((opened ? "opened, closed " : "never opened, closed ") + e.code);
          });
          window.done = true;
        })();
        </script></body></html>`,
        { headers: { "content-type": "text/html" } },
      ));
    let browser: Browser | undefined;
    try {
      bridge = await stack.bridge(["--vaultAccountIds", "0", "--http", "--verbose"]);
      browser = await launchChromium();
      const tab = await browser.context.newPage();
      await tab.goto(
        `http://127.0.0.1:${page.addr.port}/?bridge=${encodeURIComponent(bridge.address)}`,
      );
      await tab.waitForFunction(() => (globalThis as { done?: boolean }).done === true, null, {
        timeout: 20_000,
      });
      const results = await tab.evaluate(() =>
        (globalThis as unknown as { results: Record<string, string> }).results
      );
      // The CORS request is refused by the bridge (403 without CORS headers: the page cannot read it).
      assert.match(results.cors, /^blocked:/);
      assert.equal(results.simple, "opaque opaque");
      // the WebSocket handshake got the same 403: the page never had an open socket
      assert.equal(results.ws, "never opened, closed 1006");
      // the bridge logs each refusal as it answers; wait for both lines rather than a fixed time
      const refusals = () => bridge!.stderr().match(/refused an HTTP request: .*Origin/g) ?? [];
      await waitFor(
        () => `three refusals in the bridge's log:\n${bridge!.stderr()}`,
        () => refusals().length >= 3,
        10_000,
        25,
      );
      const refused = refusals();
      assert.equal(refused.length, 3, bridge.stderr());
      assert.ok(!bridge.stderr().includes("platform transaction"));
      assert.equal(await countTransactions(), txBefore, "no platform transaction was created");
      assert.equal(
        await anvilCall(stack.anvil.url, "eth_getTransactionCount", [VAULT0, "latest"]),
        nonceBefore,
        "nothing was sent on chain",
      );
      // the same request without a page (no Origin) is accepted: the refusal above is the Origin check
      const direct = await fetch(bridge.address, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "eth_sendTransaction",
          params: [{
            from: VAULT0,
            to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
            value: "0x1",
          }],
        }),
      });
      assert.match((await direct.json()).result, /^0x[0-9a-f]{64}$/);
      assert.equal(await countTransactions(), txBefore + 1);
    } finally {
      await browser?.close();
      await page.shutdown();
      await stack.stop();
    }
  },
});
