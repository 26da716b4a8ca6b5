/**
 * The receiver's signature oracle (`jose`, independent of our code) agrees
 * with the project's own verifier on what the emulator's signer makes, and
 * refuses what is not signed: a test of the tests' yardstick.
 *
 * @module
 */
import assert from "node:assert/strict";
import { WebhookSigner } from "../../lib/emulator/webhooks/signer.ts";
import { verifyWebhookSignatureWithKeys } from "../../lib/webhooks/signature.ts";
import { joseVerifyDetached, startReceiver } from "./receiver.ts";

const enc = new TextEncoder();
// two RSA key pairs for the whole file (generating one takes a while)
const [signer, other] = await Promise.all([WebhookSigner.generate(), WebhookSigner.generate()]);

Deno.test("jose accepts the emulator signer's signatures and refuses changed ones, as our verifier does", async () => {
  const jwks = JSON.parse(JSON.stringify(signer.jwks()));
  const body = JSON.stringify({ id: "n1", data: { amount: "1.5", note: "é ✓" } });
  const sig = await signer.sign(body);
  const [head, , s] = sig.split(".");
  const flipped = s.slice(0, 10) + (s[10] === "A" ? "B" : "A") + s.slice(11);
  const cases: [string, string | null, string, boolean][] = [
    ["the signature as made", sig, body, true],
    ["a changed body", sig, body.replace("1.5", "2.5"), false],
    ["a body with one more byte", sig, body + " ", false],
    ["a changed signature", `${head}..${flipped}`, body, false],
    ["another key's signature", await other.sign(body), body, false],
    ["no header", null, body, false],
    ["an attached JWS", `${head}.e30.${s}`, body, false],
  ];
  for (const [what, header, b, valid] of cases) {
    const jose = await joseVerifyDetached(header, enc.encode(b), jwks);
    assert.equal(jose === null, valid, `jose on ${what}: ${jose}`);
    const ours = await verifyWebhookSignatureWithKeys(b, header, jwks);
    assert.equal(ours.ok, valid, `our verifier on ${what}`);
  }
  // a signature made by an RS256 key of the same JWKS is refused (alg pinned to RS512)
  const rs256 = `${
    btoa(JSON.stringify({ alg: "RS256", kid: signer.kid })).replace(/=+$/, "")
  }..${s}`;
  assert.notEqual(await joseVerifyDetached(rs256, enc.encode(body), jwks), null);
});

Deno.test("the receiver marks a delivery signed by the JWKS's key as ok, and any other as not", async () => {
  const jwksServer = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => Response.json(signer.jwks()),
  );
  const rx = startReceiver({ jwksUrl: `http://127.0.0.1:${jwksServer.addr.port}/jwks.json` });
  try {
    const send = async (body: string, header: string) => {
      const r = await fetch(rx.url + "/h", {
        method: "POST",
        headers: { "content-type": "application/json", "service-webhook-signature": header },
        body,
      });
      await r.body?.cancel();
    };
    const body = '{"id":"n1","eventType":"e","webhookId":"w"}';
    await send(body, await signer.sign(body));
    await send(body, await other.sign(body));
    await send(body + "\n", await signer.sign(body));
    assert.deepEqual(rx.received.map((r) => r.signatureOk), [true, false, false]);
    assert.equal(rx.received[0].signatureProblem, undefined);
    assert.match(rx.received[1].signatureProblem!, /^jose: /);
  } finally {
    await rx.close();
    await jwksServer.shutdown();
  }
});
