/**
 * The suspension e-mail's words (issue #11): the rate is printed exactly,
 * never as the threshold it was compared with (80.1% is not "80%"), and the
 * e-mail says how to reactivate: the `service webhooks enable` command, the
 * console's address (without its token) and the API call. The rates are
 * written here as literals, independent of the code's formatting.
 */

import assert from "node:assert/strict";
import { exactPercent, suspensionMail } from "../../lib/emulator/webhooks/suspension_mail.ts";
import { DEFAULT_BREAKER_CONFIG } from "../../lib/webhooks/mod.ts";

const endpoint = {
  url: "https://example.com/hook",
  webhookId: "w-1",
  time: Date.UTC(2026, 0, 1),
  consoleUrl: "http://127.0.0.1:40123/console",
};

Deno.test("a rate just above the threshold is printed as it is, not as the threshold", () => {
  const mail = suspensionMail(endpoint, {
    reason: "immediate",
    errorRate: 801 / 1000,
    errors: 801,
    attempts: 1000,
  }, DEFAULT_BREAKER_CONFIG);
  assert.match(
    mail.body,
    /^Reason: error rate above 80% \(801 of 1000 attempts in the last hour failed, 80\.1%\)\.$/m,
  );
  assert.doesNotMatch(mail.body, /failed, 80%/);
});

Deno.test("the percentage gets the decimals it needs to differ from the threshold", () => {
  assert.equal(exactPercent(5, 6, 0.8), "83.3%");
  assert.equal(exactPercent(801, 1000, 0.8), "80.1%");
  // one decimal would print 80.0: two are given
  assert.equal(exactPercent(2001, 2500, 0.8), "80.04%");
  assert.equal(exactPercent(4, 8, 0.5), "50%");
  assert.equal(exactPercent(7, 10, 0.5), "70%");
  // just below the band's floor, printed below it
  assert.equal(exactPercent(4999, 10000, 0.5), "49.99%");
});

Deno.test("the e-mail says how to reactivate: the command, the console, the API", () => {
  const mail = suspensionMail(endpoint, {
    reason: "sustained",
    errorRate: 2 / 3,
    errors: 2,
    attempts: 3,
  }, DEFAULT_BREAKER_CONFIG);
  const last = mail.body.split("\n").at(-1)!;
  assert.equal(
    last,
    "Reactivate it (at once, no cooldown) with `service webhooks enable --webhookId w-1`, " +
      "with the Reactivate button of the console (http://127.0.0.1:40123/console, opened from " +
      "the consoleUrl that `service emulator` printed at start), or with PATCH /v1/webhooks/w-1 " +
      '{"enabled": true}.',
  );
  assert.match(mail.body, /2 of 3 attempts in the last hour failed, 66\.7%\)/);
});
