/**
 * The emulator's console in a real browser (Debian chromium driven by
 * playwright-core, 1280×800): an endpoint suspended by the breaker shows
 * SUSPENDED; Reactivate, an attempts dialog's Resend and "Resend
 * notifications" are clicked, and what a real receiver (tests/support/
 * receiver.ts, signatures checked with jose) then gets is checked; the page
 * follows the changes without a reload (polling). A page of another origin
 * that knows the token still cannot act (Origin check). Screenshots are
 * kept under `$SERVICE_ARTIFACTS_DIR/console/` (default `dist/artifacts/console/`,
 * git-ignored).
 *
 * The refusals (foreign Host, foreign Origin, missing or wrong token) are
 * also checked over raw HTTP, where every header is exactly what the test
 * wrote.
 */
import assert from "node:assert/strict";
import { type EmulatorProcess, startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { type ReceiverAnswer, startReceiver } from "../support/receiver.ts";
import { assertPeer } from "../support/required.ts";
import { ROOT } from "../support/tools.ts";
import {
  type Browser,
  CHROMIUM,
  haveChromium,
  launchChromium,
  skipBrowser,
} from "../support/browser.ts";
const ARTIFACTS = `${Deno.env.get("SERVICE_ARTIFACTS_DIR") || `${ROOT}dist/artifacts`}/console`;

async function trigger(emu: EmulatorProcess, resourceId: string): Promise<string> {
  const r = await emu.api<{ data: { id: string }[] }>("POST", "/admin/notifications", {
    body: { eventType: "vault_account.asset.added", resourceId },
  });
  assert.equal(r.status, 201);
  return r.data.data[0].id;
}

async function hookStatus(emu: EmulatorProcess, id: string): Promise<string> {
  return (await emu.api<{ status: string }>("GET", `/v1/webhooks/${id}`)).data.status;
}

Deno.test({
  name: "console in Chromium: Reactivate, Resend and Resend notifications reach a real receiver",
  ignore: skipBrowser,
  async fn() {
    assertPeer(`chromium (${CHROMIUM})`, haveChromium);
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    // one attempt in flight; the first failure (1 of 1) suspends at once. Time ÷ 10: the first
    // retry is due 1 s later, and the breaker's hour is 6 minutes, longer than this test
    const emu = await startEmulatorOnAnvil(["--timeScale", "10", "--webhookConcurrency", "1"]);
    let answer: ReceiverAnswer = 500;
    const rc = startReceiver({ jwksUrl: emu.ready.jwksUrl, script: () => answer });
    const foreign = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
      const target = new URL(req.url).searchParams.get("target") ?? "";
      return new Response(
        `<!doctype html><html><body><script>
        window.results = {};
        (async () => {
          const target = ${JSON.stringify(target)};
          try {
            const r = await fetch(target, {method: "POST"});
            window.results.cors = "status " + r.status;
          } catch (e) { window.results.cors = "blocked: " + e.message; }
          try {
            const r = await fetch(target, {method: "POST", mode: "no-cors"});
            window.results.simple = "opaque " + r.type;
          } catch (e) { window.results.simple = "blocked: " + e.message; }
          window.done = true;
        })();
        </script></body></html>`,
        { headers: { "content-type": "text/html" } },
      );
    });
    let browser: Browser | undefined;
    try {
      const created = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
        body: {
          url: `${rc.url}/hook`,
          events: ["vault_account.asset.added"],
          description: "console test",
        },
      });
      assert.equal(created.status, 201);
      const w = created.data.id;
      const n1 = await trigger(emu, "res-1");
      await waitFor("the suspension", async () => (await hookStatus(emu, w)) === "SUSPENDED");
      const n2 = await trigger(emu, "res-2");
      const n3 = await trigger(emu, "res-3");
      assert.equal(rc.received.length, 1, "one attempt, then suspended");

      browser = await launchChromium({ viewport: { width: 1280, height: 800 } });
      const tab = await browser.context.newPage();
      const pageErrors: string[] = [];
      tab.on("pageerror", (e) => pageErrors.push(String(e)));
      tab.on("console", (m) => {
        if (m.type() === "error") pageErrors.push(m.text());
      });

      // ---- a page of another origin, even one that knows the token, cannot reactivate
      const token = new URL(emu.ready.consoleUrl).searchParams.get("token")!;
      const enableUrl = `${emu.ready.apiBaseUrl}/console/api/webhooks/${w}/enable?token=${token}`;
      await tab.goto(
        `http://127.0.0.1:${foreign.addr.port}/?target=${encodeURIComponent(enableUrl)}`,
      );
      await tab.waitForFunction(() => (globalThis as { done?: boolean }).done === true, null, {
        timeout: 20_000,
      });
      const results = await tab.evaluate(() =>
        (globalThis as unknown as { results: Record<string, string> }).results
      );
      assert.match(results.cors, /^blocked:/);
      assert.equal(results.simple, "opaque opaque");
      assert.equal(await hookStatus(emu, w), "SUSPENDED", "the foreign page changed nothing");
      assert.equal(rc.received.length, 1);

      // ---- the console: the endpoint is SUSPENDED at a glance
      // from here on, the console's own page: no script error, no failed request
      pageErrors.length = 0;
      await tab.goto(emu.ready.consoleUrl);
      const card = tab.locator(`.card[data-webhook="${w}"]`);
      await card.locator(".pill", { hasText: "SUSPENDED" }).waitFor({ timeout: 20_000 });
      await tab.locator("#d-banner").waitFor({ state: "visible" });
      await tab.locator(`tr[data-notification="${n3}"]`).waitFor();
      assert.equal(await tab.locator("#d-rate").textContent(), "100%");
      await tab.screenshot({ path: `${ARTIFACTS}/1-suspended.png` });

      // ---- Reactivate: the three waiting notifications are delivered, once each
      answer = 200;
      await card.locator('button[data-action="reactivate"]').click();
      await rc.waitForCount(4, 20_000);
      const afterEnable = rc.received.slice(1).map((r) => r.json.id).sort();
      assert.deepEqual(afterEnable, [n1, n2, n3].sort());
      assert.ok(rc.received.every((r) => r.signatureOk), "signatures verified with jose");
      assert.equal(await hookStatus(emu, w), "ENABLED");
      // the page follows without a reload
      await card.locator(".pill", { hasText: "ENABLED" }).waitFor({ timeout: 20_000 });
      await tab.locator("#d-banner").waitFor({ state: "hidden" });
      await waitFor(
        "every row COMPLETED",
        async () => (await tab.locator("#rows .pill", { hasText: "COMPLETED" }).count()) === 3,
        20_000,
      );
      await tab.screenshot({ path: `${ARTIFACTS}/2-reactivated.png` });

      // ---- filters: by resource id, by status
      await tab.fill("#f-resource", "res-1");
      await waitFor(
        "the resource filter",
        async () =>
          (await tab.locator("#rows tr[data-notification]").count()) === 1 &&
          (await tab.locator(`tr[data-notification="${n1}"]`).count()) === 1,
        20_000,
      );
      assert.equal(await tab.locator("#range").textContent(), "1–1 of 1");
      await tab.selectOption("#f-status", "FAILED");
      await tab.locator("#rows td.empty").waitFor();
      await tab.selectOption("#f-status", "COMPLETED");
      await tab.locator(`tr[data-notification="${n1}"]`).waitFor();

      // ---- the attempts dialog: the failure, then the success after Reactivate; Resend
      await tab.locator(`tr[data-notification="${n1}"] button[data-action="attempts"]`).click();
      const dialog = tab.locator("#attempts");
      await dialog.waitFor({ state: "visible" });
      await waitFor(
        "two attempts in the dialog",
        async () => (await dialog.locator("#a-rows tr").count()) === 2,
        20_000,
      );
      assert.equal(
        await dialog.locator("#a-rows tr:nth-child(1) td:nth-child(3)").textContent(),
        "HTTP 500",
      );
      assert.equal(
        await dialog.locator("#a-rows tr:nth-child(2) td:nth-child(3)").textContent(),
        "HTTP 200",
      );
      await dialog.locator("#a-resend").click();
      await rc.waitForCount(5, 20_000);
      assert.equal(rc.received[4].json.id, n1, "Resend delivered that notification again");
      // the dialog follows: a third attempt appears without a reload
      await waitFor(
        "the third attempt in the dialog",
        async () => (await dialog.locator("#a-rows tr").count()) === 3,
        20_000,
      );
      await tab.screenshot({ path: `${ARTIFACTS}/3-attempts.png` });
      await dialog.locator("#a-close").click();
      await dialog.waitFor({ state: "hidden" });
      await tab.click("#f-clear");
      await waitFor(
        "the filters cleared",
        async () => (await tab.locator("#rows tr[data-notification]").count()) === 3,
        20_000,
      );

      // ---- Resend notifications: every notification of the last 24 h, whatever its status
      await tab.click("#resend-all");
      const confirm = tab.locator("#confirm");
      await confirm.waitFor({ state: "visible" });
      assert.match((await tab.locator("#confirm-text").textContent())!, /^Resend 3 notifications /);
      await tab.screenshot({ path: `${ARTIFACTS}/4-resend-notifications.png` });
      await tab.click("#confirm-ok");
      await rc.waitForCount(8, 20_000);
      assert.deepEqual(rc.received.slice(5).map((r) => r.json.id).sort(), [n1, n2, n3].sort());
      assert.ok(rc.received.every((r) => r.signatureOk));

      // ---- the chain tab lists the vault accounts
      await tab.click('nav button[data-tab="chain"]');
      await tab.locator("#accounts tr", { hasText: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" })
        .waitFor();
      await tab.screenshot({ path: `${ARTIFACTS}/5-chain.png` });
      assert.deepEqual(pageErrors, [], "no script error in the page");
    } finally {
      await browser?.close();
      await foreign.shutdown();
      await rc.close();
      await emu.stop();
    }
  },
});

/** One raw HTTP/1.1 request with exactly these header lines; the status and body. */
async function rawRequest(
  port: number,
  method: string,
  path: string,
  headers: string[],
): Promise<{ status: number; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const head = [`${method} ${path} HTTP/1.1`, ...headers, "Connection: close", "", ""];
    await conn.write(new TextEncoder().encode(head.join("\r\n")));
    let text = "";
    const buf = new Uint8Array(16384);
    const dec = new TextDecoder();
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += dec.decode(buf.subarray(0, n), { stream: true });
    }
    // the body of a JSON answer (chunked or not): from its first "{" to its last "}"
    const body = text.slice(text.indexOf("\r\n\r\n") + 4);
    return {
      status: Number(text.split(" ")[1]),
      body: body.slice(body.indexOf("{"), body.lastIndexOf("}") + 1),
    };
  } finally {
    conn.close();
  }
}

Deno.test("console: a foreign Host, a foreign Origin, a missing or wrong token are refused, and nothing happens", async () => {
  const emu = await startEmulatorOnAnvil(["--timeScale", "3600", "--webhookConcurrency", "1"]);
  let answer = 500;
  const rc = startReceiver({ jwksUrl: emu.ready.jwksUrl, script: () => answer });
  try {
    const w = (await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: `${rc.url}/hook`, events: ["vault_account.asset.added"] },
    })).data.id;
    await trigger(emu, "res-1");
    await waitFor("the suspension", async () => (await hookStatus(emu, w)) === "SUSPENDED");
    const port = Number(new URL(emu.ready.apiBaseUrl).port);
    const token = new URL(emu.ready.consoleUrl).searchParams.get("token")!;
    const host = `Host: 127.0.0.1:${port}`;
    const list = "/console/api/webhooks";
    const enable = `/console/api/webhooks/${w}/enable`;

    // the baseline: loopback Host, no Origin (or the console's own), the token
    assert.equal(
      (await rawRequest(port, "GET", list, [host, `X-Console-Token: ${token}`])).status,
      200,
    );
    assert.equal(
      (await rawRequest(port, "GET", list, [
        host,
        `Origin: http://127.0.0.1:${port}`,
        `X-Console-Token: ${token}`,
      ])).status,
      200,
    );
    assert.equal((await rawRequest(port, "GET", `/console?token=${token}`, [host])).status, 200);
    assert.equal(
      (await rawRequest(port, "GET", `/console?token=${token}`, ["Host: localhost"])).status,
      200,
    );

    const refused: [string, string, string[], number, RegExp | null][] = [
      [
        "GET",
        list,
        [`Host: evil.example:${port}`, `X-Console-Token: ${token}`],
        403,
        /loopback Host/,
      ],
      ["POST", enable, [`Host: evil.example`, `X-Console-Token: ${token}`], 403, /loopback Host/],
      // no Host at all (HTTP/1.1 requires one): the console refuses it, naming what was missing
      ["POST", enable, [`X-Console-Token: ${token}`], 403, /loopback Host \(got "none"/],
      [
        "POST",
        enable,
        [host, "Origin: http://evil.example", `X-Console-Token: ${token}`],
        403,
        /Origin/,
      ],
      ["POST", `${enable}?token=${token}`, [host, "Origin: null"], 403, /Origin/],
      // another local port is another origin
      [
        "POST",
        enable,
        [host, "Origin: http://127.0.0.1:1", `X-Console-Token: ${token}`],
        403,
        /Origin/,
      ],
      ["POST", enable, [host], 401, /per-run token/],
      [
        "POST",
        enable,
        [host, `X-Console-Token: ${token.slice(0, -1)}${token.endsWith("x") ? "y" : "x"}`],
        401,
        /per-run token/,
      ],
      ["GET", list, [host], 401, /per-run token/],
      ["GET", "/console", [host], 401, /per-run token/],
      ["GET", "/console?token=wrong", [host], 401, /per-run token/],
    ];
    for (const [method, path, headers, status, why] of refused) {
      const r = await rawRequest(port, method, path, headers);
      assert.equal(r.status, status, `${method} ${path} ${headers.join(" | ")}: ${r.body}`);
      if (why) assert.match(JSON.parse(r.body).message, why);
      assert.ok(!r.body.includes(token), "the token is not echoed");
    }
    // nothing happened: still suspended, one attempt only
    assert.equal(await hookStatus(emu, w), "SUSPENDED");
    assert.equal(rc.received.length, 1);
    // and the same request with everything right does reactivate (the refusals were the checks)
    answer = 200;
    const ok = await rawRequest(port, "POST", enable, [host, `X-Console-Token: ${token}`]);
    assert.equal(ok.status, 200, ok.body);
    assert.equal(await hookStatus(emu, w), "ENABLED");
  } finally {
    await rc.close();
    await emu.stop();
  }
});
