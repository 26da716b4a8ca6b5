import assert from "node:assert/strict";
import {
  CredentialsError,
  loadCredentials,
  MAX_PRIVATE_KEY_BYTES,
  normalizeBaseUrl,
  readPrivateKeyFile,
} from "../../lib/platform/mod.ts";
import { RsaSigner } from "../../lib/core/rsa.ts";
import { makeTestKeys } from "../support/keys.ts";

const keys = await makeTestKeys();

Deno.test("a base URL is accepted with or without /v1 and trailing slashes", () => {
  assert.deepEqual(
    normalizeBaseUrl("https://sandbox-api.example.io"),
    "https://sandbox-api.example.io",
  );
  assert.deepEqual(
    normalizeBaseUrl("https://sandbox-api.example.io/v1"),
    "https://sandbox-api.example.io",
  );
  assert.deepEqual(
    normalizeBaseUrl("https://sandbox-api.example.io/v1/"),
    "https://sandbox-api.example.io",
  );
  assert.deepEqual(
    normalizeBaseUrl("http://127.0.0.1:8080/prefix/v1"),
    "http://127.0.0.1:8080/prefix",
  );
});

Deno.test("the private key loads from a file path or from the PEM text", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/k.pem`, keys.pkcs8Pem);
    const apiBaseUrl = "http://127.0.0.1:9";
    const a = await loadCredentials({ apiKey: "k", privateKey: `${dir}/k.pem`, apiBaseUrl });
    const b = await loadCredentials({ apiKey: "k", privateKey: keys.pkcs1Pem, apiBaseUrl });
    // both are the shared RS256 signer, and the two PEM forms hold the same key
    assert.ok(a.privateKey instanceof RsaSigner && b.privateKey instanceof RsaSigner);
    assert.deepEqual([a.privateKey.alg, b.privateKey.alg], ["RS256", "RS256"]);
    const data = new TextEncoder().encode("a.b");
    assert.deepEqual(await a.privateKey.sign(data), await b.privateKey.sign(data));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("missing, unreadable and malformed keys are clear errors that never contain the key", async () => {
  const secretApiKey = "sk_live_DO_NOT_PRINT_123";
  /** A CredentialsError saying `hint` and never the key, its material or a PEM line. */
  const clear = (hint: string) => (e: unknown) => {
    assert.ok(e instanceof CredentialsError, String(e));
    assert.ok(e.message.includes(hint), e.message);
    assert.ok(!e.message.includes(secretApiKey), "API key in message");
    assert.ok(!e.message.includes("MII"), "key material in message");
    for (
      const line of keys.pkcs8Pem.split("\n").filter((l) => l.length > 20 && !l.startsWith("-----"))
    ) {
      assert.ok(!e.message.includes(line), "PEM body line in message");
    }
    return true;
  };
  await assert.rejects(() => loadCredentials({ apiKey: secretApiKey }), clear("--privateKey"));
  await assert.rejects(() => loadCredentials({ privateKey: keys.pkcs8Pem }), clear("--apiKey"));
  await assert.rejects(
    () => loadCredentials({ apiKey: secretApiKey, privateKey: "/no/such/key.pem" }),
    clear("no such file"),
  );
  const broken = keys.pkcs8Pem.replace(/[A-Za-z]{20}/, "AAAAAAAAAAAAAAAAAAAA");
  await assert.rejects(
    () => loadCredentials({ apiKey: secretApiKey, privateKey: broken }),
    clear(""),
  );
  await assert.rejects(
    () =>
      loadCredentials({
        apiKey: secretApiKey,
        privateKey: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
      }),
    clear(""),
  );
});

Deno.test("a key path that is a device, a FIFO, a directory or a huge file is refused at once, with a bounded read", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const fifo = `${dir}/key.fifo`;
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.deepEqual(made.code, 0, "mkfifo");
    // a PEM-looking file far larger than any key: refused by its size, not parsed
    const huge = `${dir}/huge.pem`;
    await Deno.writeTextFile(
      huge,
      keys.pkcs8Pem + "#".repeat(MAX_PRIVATE_KEY_BYTES),
    );
    const cases: [string, RegExp][] = [
      ["/dev/zero", /"\/dev\/zero": it is not a regular file \(a FIFO, device or socket\)/],
      [fifo, /key\.fifo": it is not a regular file/],
      [dir, /it is a directory/],
      [huge, /huge\.pem": it is larger than 64 KiB, too large for a PEM key/],
    ];
    for (const [path, want] of cases) {
      // a FIFO nobody writes to would block a read forever: the test would hang, not fail
      await assert.rejects(() => loadCredentials({ apiKey: "k", privateKey: path }), (e) => {
        assert.ok(e instanceof CredentialsError, `${path}: ${e}`);
        assert.ok(want.test(e.message), `${path}: ${e.message}`);
        assert.ok(e.message.includes("--privateKey"), e.message);
        return true;
      });
    }
    // a key exactly at the bound still loads
    const padded = `${dir}/padded.pem`;
    await Deno.writeTextFile(
      padded,
      keys.pkcs8Pem + "\n".repeat(MAX_PRIVATE_KEY_BYTES - keys.pkcs8Pem.length),
    );
    assert.deepEqual((await Deno.stat(padded)).size, MAX_PRIVATE_KEY_BYTES);
    assert.deepEqual((await readPrivateKeyFile(padded)).trim(), keys.pkcs8Pem.trim());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
