import assert from "node:assert/strict";
import { defaultLibcryptoPaths } from "../../lib/core/openssl_library.ts";
import { OpenSslSigner } from "../../lib/core/openssl_signer.ts";
import { WebhookSigner } from "../../lib/emulator/webhooks/signing/signer.ts";
import { BatchSignPool, MAX_BATCH } from "../../lib/emulator/webhooks/signing/batch_sign_pool.ts";
import { verifyWebhookSignature } from "../../lib/webhooks/signature.ts";
import { toBase64Url as base64url } from "../../lib/core/mod.ts";

const ALG = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-512" } as const;
const enc = new TextEncoder();

async function keyPair(): Promise<{ der: Uint8Array; key: CryptoKey; pub: CryptoKey }> {
  const pair = await crypto.subtle.generateKey(
    { ...ALG, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
    true,
    ["sign", "verify"],
  ) as CryptoKeyPair;
  const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  return { der, key: pair.privateKey, pub: pair.publicKey };
}

// Bodies of several shapes and sizes: empty, ASCII, non-ASCII, binary, > one SHA-512 block, 1 MiB.
const BODIES: Uint8Array<ArrayBuffer>[] = [
  new Uint8Array(0),
  enc.encode('{"id":"n1","eventType":"transaction.created","data":{}}'),
  enc.encode("émulateur ✓ 中文 🚀"),
  crypto.getRandomValues(new Uint8Array(1000)),
  new Uint8Array(1 << 20).map((_, i) => i * 31),
];

Deno.test("OpenSSL's RS512 signatures are byte-identical to WebCrypto's, on and off the event loop", async () => {
  const { der, key } = await keyPair();
  const signer = OpenSslSigner.open(der);
  try {
    assert.ok(defaultLibcryptoPaths().includes(signer.library));
    for (const body of BODIES) {
      const expected = new Uint8Array(await crypto.subtle.sign(ALG, key, body));
      assert.equal(expected.length, 256);
      assert.deepEqual(await signer.sign(body), expected, `body of ${body.length} bytes`);
      assert.deepEqual(signer.signSync(body), expected, `body of ${body.length} bytes (sync)`);
    }
    // many at once (more than the parallel bound): each still matches its own body
    const many = Array.from({ length: 12 }, (_, i) => enc.encode(`body ${i}`));
    const sigs = await Promise.all(many.map((b) => signer.sign(b)));
    for (let i = 0; i < many.length; i++) {
      assert.deepEqual(sigs[i], new Uint8Array(await crypto.subtle.sign(ALG, key, many[i])));
    }
  } finally {
    signer.close();
  }
});

Deno.test("the key bytes handed to OpenSSL are not changed, and a closed signer refuses to sign", async () => {
  const { der } = await keyPair();
  const copy = new Uint8Array(der);
  const signer = OpenSslSigner.open(der);
  assert.deepEqual(der, copy);
  signer.close();
  await assert.rejects(() => signer.sign(enc.encode("x")), /closed/);
  assert.throws(() => signer.signSync(enc.encode("x")), /closed/);
});

Deno.test("a bogus library path or a key that is not PKCS#8 fails to open with a reason", async () => {
  const { der } = await keyPair();
  assert.throws(
    () => OpenSslSigner.open(der, { paths: ["/nonexistent/libcrypto.so.99"] }),
    /libcrypto not loaded.*nonexistent/,
  );
  assert.throws(() => OpenSslSigner.open(der, { paths: [] }), /no libcrypto location/);
  assert.throws(
    () => OpenSslSigner.open(enc.encode("not a key")),
    /could not read the private key/,
  );
});

Deno.test("the webhook signer uses OpenSSL, and its headers verify against the JWKS", async () => {
  const signer = await WebhookSigner.generate();
  const lines: string[] = [];
  try {
    assert.equal(await signer.useFastSigning({ log: (l) => lines.push(l) }), "openssl");
    assert.equal(lines.length, 1);
    assert.match(lines[0], /OpenSSL \(libcrypto/);
    const body = JSON.stringify({ id: "n1", data: { amount: "1.5" } });
    const header = await signer.sign(body);
    assert.deepEqual(await verifyWebhookSignature(body, header, signer.jwks()), {
      ok: true,
      kid: signer.kid,
    });
    assert.equal((await verifyWebhookSignature(body + " ", header, signer.jwks())).ok, false);
    // every padding length, and bytes whose base64 has "+" and "/" (base64url: "-" and "_")
    for (let len = 0; len <= 5; len++) {
      const raw = new Uint8Array(len).fill(0xfb).map((b, i) => b ^ (i & 4));
      const h = await signer.sign(raw);
      assert.equal((await verifyWebhookSignature(raw, h, signer.jwks())).ok, true, `${len} bytes`);
    }
    // the same header as the WebCrypto path makes for the same key
    const plain = await WebhookSigner.fromPrivateJwk(signer.toPrivateJwk());
    assert.equal(plain.mode, "main-thread");
    assert.equal(await plain.sign(body), header);
  } finally {
    signer.close();
  }
});

Deno.test("with a bogus libcrypto path the webhook signer falls back to WebCrypto and says so once", async () => {
  const signer = await WebhookSigner.generate();
  const lines: string[] = [];
  try {
    const mode = await signer.useFastSigning({
      workers: 1,
      libcryptoPaths: ["/nonexistent/libcrypto.so.3"],
      log: (l) => lines.push(l),
    });
    assert.equal(mode, "workers");
    assert.equal(lines.length, 1);
    assert.match(lines[0], /WebCrypto on 1 worker thread.*OpenSSL not used: libcrypto not loaded/);
    const bodies = ["a", '{"id":"n"}', ""];
    for (const body of bodies) {
      const header = await signer.sign(body);
      assert.equal((await verifyWebhookSignature(body, header, signer.jwks())).ok, true);
    }
    assert.equal(lines.length, 1, "nothing more is logged per signature");
    assert.ok(!lines[0].includes(String(signer.toPrivateJwk().d)), "no key material in the log");
  } finally {
    signer.close();
  }
});

Deno.test("an OpenSSL signature that fails mid-run is made by WebCrypto instead, with one log line", async () => {
  const signer = await WebhookSigner.generate();
  const lines: string[] = [];
  try {
    let inner: OpenSslSigner | undefined;
    const mode = await signer.useFastSigning({
      workers: 0,
      log: (l) => lines.push(l),
      openOpenSsl: (der, opts) => (inner = OpenSslSigner.open(der, opts)),
    });
    assert.equal(mode, "openssl");
    // a real failure of the OpenSSL signer: its key freed under it (libcrypto
    // itself cannot be made to fail on a good key from here)
    inner!.close();
    const body = '{"id":"after"}';
    const header = await signer.sign(body);
    assert.equal((await verifyWebhookSignature(body, header, signer.jwks())).ok, true);
    assert.equal(signer.mode, "main-thread");
    assert.equal(lines.length, 2);
    assert.match(
      lines[1],
      /OpenSSL failed \(OpenSSL signer closed\); RS512 by WebCrypto from now on/,
    );
    await signer.sign("again");
    assert.equal(lines.length, 2);
  } finally {
    signer.close();
  }
});

Deno.test("a signature is the same whichever signer made it, for the JWS signing input", async () => {
  const { der, key } = await keyPair();
  const signer = OpenSslSigner.open(der, { parallel: 1 });
  try {
    const input = enc.encode(`${base64url('{"alg":"RS512","kid":"k"}')}.${base64url("{}")}`);
    assert.deepEqual(
      await signer.sign(input),
      new Uint8Array(await crypto.subtle.sign(ALG, key, input)),
    );
  } finally {
    signer.close();
  }
});

Deno.test("OpenSSL signing workers: a burst of bodies is signed in batches, each signature WebCrypto's for its own body", async () => {
  const { der, key } = await keyPair();
  const header = base64url('{"alg":"RS512","kid":"k"}');
  const pool = await BatchSignPool.start(der, header, { size: 2 });
  try {
    assert.ok(defaultLibcryptoPaths().includes(pool.library));
    // more than MAX_BATCH at once, strings and bytes, so several batches go to both workers
    const bodies: (string | Uint8Array)[] = Array.from(
      { length: 3 * MAX_BATCH + 5 },
      (_, i) => i % 3 === 0 ? BODIES[i % BODIES.length] : `{"id":"n${i}","é":"✓"}`,
    );
    const sigs = await Promise.all(bodies.map((b) => pool.sign(b)));
    for (let i = 0; i < bodies.length; i++) {
      const b = bodies[i];
      const input = enc.encode(`${header}.${base64url(b)}`);
      const expected = base64url(new Uint8Array(await crypto.subtle.sign(ALG, key, input)));
      assert.equal(sigs[i], expected, `body ${i}`);
    }
  } finally {
    pool.close();
  }
  // closed: signatures not made reject, and so do later ones
  await assert.rejects(() => pool.sign("late"), /signing pool closed/);
});

Deno.test("OpenSSL signing workers: a pending batch rejects on close; a bad key or library fails at start", async () => {
  const { der } = await keyPair();
  const pool = await BatchSignPool.start(der, "h", { size: 1 });
  const pending = pool.sign("in flight");
  pool.close();
  await assert.rejects(() => pending, /signing pool closed/);
  await assert.rejects(
    () => BatchSignPool.start(der, "h", { size: 1, paths: ["/nonexistent/libcrypto.so.3"] }),
    /libcrypto not loaded.*nonexistent/,
  );
  await assert.rejects(
    () => BatchSignPool.start(enc.encode("not a key"), "h", { size: 1 }),
    /could not read the private key/,
  );
});

Deno.test("the webhook signer moves to the OpenSSL workers when signatures queue up, and not with opensslWorkers 0", async () => {
  const signer = await WebhookSigner.generate();
  const plain = await WebhookSigner.fromPrivateJwk(signer.toPrivateJwk());
  const lines: string[] = [];
  const burst = (from: number) => Array.from({ length: 40 }, (_, i) => `{"id":"n${from + i}"}`);
  try {
    assert.equal(
      await signer.useFastSigning({ opensslWorkers: 1, log: (l) => lines.push(l) }),
      "openssl",
    );
    assert.deepEqual(lines, [
      `webhook signatures: RS512 by OpenSSL (${lines[0]?.match(/\((.*?)\)/)?.[1]}) through FFI; ` +
      "in batches on 1 worker thread(s) once signatures queue up",
    ]);
    assert.equal(signer.batching, false, "one signature at a time: no threads");
    await signer.sign("one");
    await signer.batchStarted();
    assert.equal(signer.batching, false);
    // a burst of more than BATCH_START_BACKLOG starts them; every header is WebCrypto's
    const first = burst(0);
    const firstHeaders = await Promise.all(first.map((b) => signer.sign(b)));
    await signer.batchStarted();
    assert.equal(signer.batching, true);
    const second = burst(40);
    const secondHeaders = await Promise.all(second.map((b) => signer.sign(b)));
    const bodies = [...first, ...second];
    const headers = [...firstHeaders, ...secondHeaders];
    for (let i = 0; i < bodies.length; i++) {
      assert.equal(headers[i], await plain.sign(bodies[i]), `body ${i}`);
    }
    assert.equal((await verifyWebhookSignature(bodies[79], headers[79], signer.jwks())).ok, true);
    assert.equal(lines.length, 1, "nothing more is logged");
    assert.equal(signer.mode, "openssl");
  } finally {
    signer.close();
  }
  const other = await WebhookSigner.generate();
  const more: string[] = [];
  try {
    await other.useFastSigning({ opensslWorkers: 0, log: (l) => more.push(l) });
    assert.match(more[0], /through FFI$/);
    await Promise.all(burst(0).map((b) => other.sign(b)));
    await other.batchStarted();
    assert.equal(other.batching, false);
  } finally {
    other.close();
  }
});

Deno.test("batchStartBacklog 0 starts the OpenSSL workers at once", async () => {
  const signer = await WebhookSigner.generate();
  try {
    await signer.useFastSigning({ batchStartBacklog: 0, opensslWorkers: 1 });
    assert.equal(signer.batching, true);
    const h = await signer.sign('{"id":"n1"}');
    assert.equal((await verifyWebhookSignature('{"id":"n1"}', h, signer.jwks())).ok, true);
  } finally {
    signer.close();
  }
});
