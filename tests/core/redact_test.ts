/**
 * The one redactor (`lib/core/redact.ts`) and what a terminal is shown (`lib/cli/shown.ts`):
 * the API key whole or cut short, any part of a recent request token, PEM text, `Bearer`
 * values and JWT parts are replaced; ids that merely share the inside of a UUID key are not;
 * control characters are escaped. Issue 32.
 */

import assert from "node:assert/strict";
import { redact, rememberSecret, rememberToken } from "../../lib/core/redact.ts";
import { escapeControls, shown } from "../../lib/cli/shown.ts";
import { makeTestKeys } from "../support/keys.ts";

const KEY = "7d1c9e2a-5b4f-4c3d-9e8f-0a1b2c3d4e5f";
const TOKEN =
  "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1cmkiOiIvdjEvdmF1bHQifQ.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";

Deno.test("the API key, a request token and PEM text are redacted whole or in part; other ids are not", async () => {
  const keys = await makeTestKeys();
  rememberSecret(KEY);
  rememberSecret(keys.pkcs8Pem);
  rememberToken(TOKEN);
  assert.equal(redact(`key=${KEY} refused`), "key=[redacted] refused");
  assert.equal(redact(`key ${KEY.slice(0, 14)}… cut`), "key [redacted]… cut");
  assert.equal(redact(`sig …${TOKEN.slice(-24)})`), "sig …[redacted])");
  assert.equal(redact(`Bearer ${TOKEN.slice(0, 50)}`), "Bearer [redacted]");
  assert.equal(redact(`x ${TOKEN.slice(0, 20)} y`), "x [redacted] y");
  const line = keys.pkcs8Pem.split("\n")[3];
  assert.equal(redact(`echo ${line.slice(5, 30)} end`), "echo [redacted] end");
  assert.equal(redact(`-----BEGIN PRIVATE KEY-----\n${line}`), "[redacted]");
  const other = "11111111-5b4f-4c3d-9e8f-222222222222";
  assert.equal(redact(`notification ${other}`), `notification ${other}`);
  assert.equal(redact("PRIVATE KEY and tests/cli/x.ts"), "PRIVATE KEY and tests/cli/x.ts");
});

Deno.test("control characters are escaped, a newline too; shown() redacts and escapes", () => {
  assert.equal(
    escapeControls("tx\x1b]0;owned\x07\nFAILED\r\t\u202e\x9b"),
    "tx\\x1b]0;owned\\x07\\nFAILED\\r\\t\\u202e\\x9b",
  );
  assert.equal(escapeControls("plain é ü ✓"), "plain é ü ✓");
  rememberSecret(KEY);
  assert.equal(shown(`${KEY}\x1b[2J`), "[redacted]\\x1b[2J");
  assert.equal(shown(shown("a\x1bb")), shown("a\x1bb"), "idempotent");
});
