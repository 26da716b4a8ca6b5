import { assert, assertEquals, assertRejects } from "../support/expect.ts";
import { CredentialsError, loadCredentials, normalizeBaseUrl } from "../../lib/platform/mod.ts";
import { makeTestKeys } from "../support/keys.ts";

const keys = await makeTestKeys();

Deno.test("a base URL is accepted with or without /v1 and trailing slashes", () => {
  assertEquals(
    normalizeBaseUrl("https://sandbox-api.example.io"),
    "https://sandbox-api.example.io",
  );
  assertEquals(
    normalizeBaseUrl("https://sandbox-api.example.io/v1"),
    "https://sandbox-api.example.io",
  );
  assertEquals(
    normalizeBaseUrl("https://sandbox-api.example.io/v1/"),
    "https://sandbox-api.example.io",
  );
  assertEquals(normalizeBaseUrl("http://127.0.0.1:8080/prefix/v1"), "http://127.0.0.1:8080/prefix");
});

Deno.test("the private key loads from a file path or from the PEM text", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/k.pem`, keys.pkcs8Pem);
    const a = await loadCredentials({ apiKey: "k", privateKey: `${dir}/k.pem` });
    const b = await loadCredentials({ apiKey: "k", privateKey: keys.pkcs1Pem });
    assertEquals(a.privateKey.type, "private");
    assertEquals(b.privateKey.type, "private");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("missing, unreadable and malformed keys are clear errors that never contain the key", async () => {
  const secretApiKey = "sk_live_DO_NOT_PRINT_123";
  const e1 = await assertRejects(() => loadCredentials({ apiKey: secretApiKey }), CredentialsError);
  assert(e1.message.includes("--privateKey"));
  const e2 = await assertRejects(
    () => loadCredentials({ privateKey: keys.pkcs8Pem }),
    CredentialsError,
  );
  assert(e2.message.includes("--apiKey"));
  const e3 = await assertRejects(
    () => loadCredentials({ apiKey: secretApiKey, privateKey: "/no/such/key.pem" }),
    CredentialsError,
  );
  assert(e3.message.includes("no such file"));
  const broken = keys.pkcs8Pem.replace(/[A-Za-z]{20}/, "AAAAAAAAAAAAAAAAAAAA");
  const e4 = await assertRejects(
    () => loadCredentials({ apiKey: secretApiKey, privateKey: broken }),
    CredentialsError,
  );
  const e5 = await assertRejects(
    () =>
      loadCredentials({
        apiKey: secretApiKey,
        privateKey: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
      }),
    CredentialsError,
  );
  for (const e of [e1, e2, e3, e4, e5]) {
    assert(!e.message.includes(secretApiKey), "API key in message");
    assert(!e.message.includes("MII"), "key material in message");
    for (
      const line of keys.pkcs8Pem.split("\n").filter((l) => l.length > 20 && !l.startsWith("-----"))
    ) {
      assert(!e.message.includes(line), "PEM body line in message");
    }
  }
});
