/**
 * Verifying real deliveries: the emulator process delivers signed
 * notifications to a capturing server over real HTTP; the captured raw body
 * and `Service-Webhook-Signature` header, as they are and tampered with, go to
 * three verifiers that must agree: the library's `verifyWebhookSignature`
 * (`mod.ts`), `service webhooks verify` (spawned), and the npm package `jose`
 * (an independent implementation). Also: a JWKS URL is fetched once and
 * again only for an unknown `kid`.
 */
import assert from "node:assert/strict";
import { runCli } from "../support/tools.ts";
import { startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { joseVerifyDetached } from "../support/receiver.ts";
import { RemoteJwks, SIGNATURE_HEADER, verifyWebhookSignature } from "../../mod.ts";
import { WebhookSigner } from "../../lib/emulator/webhooks/signer.ts";
import { toBase64Url } from "../../lib/core/mod.ts";

interface Capture {
  body: Uint8Array;
  signature: string;
}

function captureServer() {
  const got: Capture[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    got.push({
      body: new Uint8Array(await req.arrayBuffer()),
      signature: req.headers.get(SIGNATURE_HEADER) ?? "",
    });
    return new Response("ok");
  });
  return { got, url: `http://127.0.0.1:${server.addr.port}/hook`, close: () => server.shutdown() };
}

/** A JWKS server that counts its requests and serves `doc()`. */
function jwksServer(doc: () => unknown) {
  const state = { hits: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    state.hits++;
    return Response.json(doc());
  });
  return {
    state,
    url: `http://127.0.0.1:${server.addr.port}/.well-known/jwks.json`,
    close: () => server.shutdown(),
  };
}

Deno.test("our verifier, `service webhooks verify` and jose agree on real deliveries, intact and tampered", async (t) => {
  const emu = await startEmulatorOnAnvil();
  const cap = captureServer();
  const dir = await Deno.makeTempDir({ prefix: "verify-test-" });
  try {
    const hook = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: cap.url, events: ["transaction.created"] },
    });
    assert.deepEqual(hook.status, 201);
    const made = await emu.api("POST", "/admin/notifications", {
      body: { eventType: "transaction.created", resourceId: "tx-é✓", count: 2 },
    });
    assert.deepEqual(made.status, 201);
    await waitFor("2 deliveries", () => cap.got.length >= 2);
    const jwksDoc = await (await fetch(emu.ready.jwksUrl)).json();
    const { body, signature } = cap.got[0];
    const [head, , sig] = signature.split(".");
    const flippedSig = sig.slice(0, 20) + (sig[20] === "A" ? "B" : "A") + sig.slice(21);
    const oneByte = body.slice();
    oneByte[oneByte.length - 2] ^= 0x01;
    const unknownKidHead = toBase64Url(JSON.stringify({ alg: "RS512", kid: "not-in-the-jwks" }));
    const cases: { what: string; body: Uint8Array; sig: string; reason?: string }[] = [
      { what: "a real delivery as received", body, sig: signature },
      { what: "the other real delivery", body: cap.got[1].body, sig: cap.got[1].signature },
      { what: "the body changed by one byte", body: oneByte, sig: signature, reason: "mismatch" },
      {
        what: "one more byte at the end",
        body: new Uint8Array([...body, 0x20]),
        sig: signature,
        reason: "mismatch",
      },
      {
        what: "the signature changed",
        body,
        sig: `${head}..${flippedSig}`,
        reason: "mismatch",
      },
      {
        what: "another delivery's signature",
        body,
        sig: cap.got[1].signature,
        reason: "mismatch",
      },
      {
        what: "an unknown kid",
        body,
        sig: `${unknownKidHead}..${sig}`,
        reason: "unknown-kid",
      },
      { what: "an attached JWS", body, sig: `${head}.e30.${sig}`, reason: "malformed" },
      { what: "one part only", body, sig: sig, reason: "malformed" },
      { what: "a header that is not JSON", body, sig: `bm90IGpzb24..${sig}`, reason: "malformed" },
      {
        what: "a header that is a JSON array",
        body,
        sig: `${toBase64Url("[1]")}..${sig}`,
        reason: "malformed",
      },
      {
        what: "alg RS256",
        body,
        sig: `${toBase64Url(JSON.stringify({ alg: "RS256", kid: jwksDoc.keys[0].kid }))}..${sig}`,
        reason: "unsupported-alg",
      },
    ];
    const jwksFile = `${dir}/jwks.json`;
    await Deno.writeTextFile(jwksFile, JSON.stringify(jwksDoc));
    for (const c of cases) {
      await t.step(c.what, async () => {
        const valid = c.reason === undefined;
        const jose = await joseVerifyDetached(c.sig, c.body, jwksDoc);
        assert.deepEqual(jose === null, valid, `jose: ${jose}`);
        const ours = await verifyWebhookSignature(c.body, c.sig, jwksDoc);
        assert.deepEqual(ours.ok, valid, JSON.stringify(ours));
        if (!ours.ok) assert.deepEqual(ours.reason, c.reason);
        const viaUrl = await verifyWebhookSignature(c.body, c.sig, emu.ready.jwksUrl);
        assert.deepEqual(viaUrl.ok, valid);
        const bodyFile = `${dir}/body`;
        await Deno.writeFile(bodyFile, c.body);
        const r = await runCli([
          "webhooks",
          "verify",
          "--body",
          bodyFile,
          "--signature",
          c.sig,
          "--jwks",
          jwksFile,
        ]);
        assert.deepEqual(r.code, valid ? 0 : 1, r.stderr);
        if (!valid) assert.match(r.stderr, new RegExp(`invalid signature \\(${c.reason}\\)`));
      });
    }

    await t.step(
      "verify finds the emulator's JWKS from --apiBaseUrl, and reads the body from stdin",
      async () => {
        const r = await runCli([
          "webhooks",
          "verify",
          "--body",
          "-",
          "--signature",
          signature,
          "--apiBaseUrl",
          emu.ready.apiBaseUrl,
          "--format",
          "json",
        ], { stdin: new TextDecoder().decode(body) });
        assert.deepEqual(r.code, 0, r.stderr);
        assert.deepEqual(JSON.parse(r.stdout), { valid: true, kid: jwksDoc.keys[0].kid });
      },
    );

    await t.step("usage errors exit 2; an unreachable JWKS URL exits 6", async () => {
      const noBody = await runCli(["webhooks", "verify", "--signature", signature]);
      assert.deepEqual(noBody.code, 2);
      assert.match(noBody.stderr, /Missing --body/);
      const missing = await runCli([
        "webhooks",
        "verify",
        "--body",
        `${dir}/nope`,
        "--signature",
        signature,
        "--jwks",
        jwksFile,
      ]);
      assert.deepEqual(missing.code, 2);
      assert.match(missing.stderr, /no such file/);
      await Deno.writeTextFile(`${dir}/body`, "{}");
      const badJwks = await runCli([
        "webhooks",
        "verify",
        "--body",
        `${dir}/body`,
        "--signature",
        signature,
        "--jwks",
        `${dir}/body`,
      ]);
      assert.deepEqual(badJwks.code, 2);
      assert.match(badJwks.stderr, /not a JWKS/);
      const down = await runCli([
        "webhooks",
        "verify",
        "--body",
        `${dir}/body`,
        "--signature",
        signature,
        "--jwks",
        "http://127.0.0.1:9/jwks.json",
      ]);
      assert.deepEqual(down.code, 6, down.stderr);
      assert.match(down.stderr, /Cannot fetch the JWKS/);
    });
  } finally {
    await cap.close();
    await emu.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a JWKS URL is fetched once, and again only for an unknown kid (at most once per cooldown)", async () => {
  const [first, rotated] = await Promise.all([WebhookSigner.generate(), WebhookSigner.generate()]);
  let keys = first.jwks().keys;
  const server = jwksServer(() => ({ keys }));
  try {
    let now = 1_000_000;
    const remote = new RemoteJwks(server.url, { cooldownMs: 60_000, now: () => now });
    const body = '{"id":"n1"}';
    const sigFirst = await first.sign(body);
    for (let i = 0; i < 5; i++) {
      assert.ok((await verifyWebhookSignature(body, sigFirst, remote)).ok);
    }
    assert.deepEqual(server.state.hits, 1, "fetched once for five signatures by a known key");
    // the platform rotates: a signature by a kid the cached set lacks makes one more fetch
    const sigRotated = await rotated.sign(body);
    keys = [...first.jwks().keys, ...rotated.jwks().keys];
    now += 60_000;
    assert.ok((await verifyWebhookSignature(body, sigRotated, remote)).ok);
    assert.deepEqual(server.state.hits, 2);
    // forged kids within the cooldown make no fetch at all
    const forged = `${toBase64Url(JSON.stringify({ alg: "RS512", kid: "forged" }))}..${
      sigRotated.split("..")[1]
    }`;
    for (let i = 0; i < 3; i++) {
      const r = await verifyWebhookSignature(body, forged, remote);
      assert.deepEqual(r.ok ? "ok" : r.reason, "unknown-kid");
    }
    assert.deepEqual(server.state.hits, 2, "no fetch for unknown kids inside the cooldown");
    now += 60_001;
    await verifyWebhookSignature(body, forged, remote);
    assert.deepEqual(server.state.hits, 3, "one fetch once the cooldown has passed");
    assert.ok((await verifyWebhookSignature(body, sigFirst, remote)).ok);
    assert.deepEqual(server.state.hits, 3);
    // mod.ts's URL form keeps one cache per URL across calls
    const before = server.state.hits;
    for (let i = 0; i < 3; i++) {
      assert.ok((await verifyWebhookSignature(body, sigFirst, server.url)).ok);
    }
    assert.deepEqual(server.state.hits, before + 1);
  } finally {
    await server.close();
  }
});

Deno.test("an unreachable JWKS gives the jwks-unavailable reason, not an exception", async () => {
  const signer = await WebhookSigner.generate();
  const r = await verifyWebhookSignature(
    "{}",
    await signer.sign("{}"),
    new RemoteJwks("http://127.0.0.1:9/jwks.json"),
  );
  assert.deepEqual(r.ok ? "ok" : r.reason, "jwks-unavailable");
});
