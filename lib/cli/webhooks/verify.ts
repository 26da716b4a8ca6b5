/**
 * `service webhooks verify`: one delivery's signature against its raw body, with the one
 * verifier (`lib/webhooks/signature.ts`). Exit 0 valid; 1 invalid, with the reason on standard
 * error; 2 usage (a missing flag, an unreadable body or JWKS file); 6 when the JWKS URL cannot
 * be fetched.
 *
 * @module
 */

import { BodyRefused, readBody } from "../../core/read_body.ts";
import { MAX_DELIVERY_BYTES } from "./listen.ts";
import { formatFlag, leaf } from "../command.ts";
import { CliError, ExitCode, UsageError } from "../errors.ts";
import { jwksFlags, jwksSource } from "./jwks_source.ts";

/** The `verify` verb. */
export const verifyCommand = leaf({
  summary: "Check a delivery's signature header against its raw body (exit 0 valid, 1 invalid).",
  usage: "--body FILE|- --signature VALUE [--jwks URL|FILE] [--apiBaseUrl URL]",
  description:
    "--body is the raw request body as received (- reads standard input), --signature the\n" +
    "Service-Webhook-Signature header's value. Keys: --jwks, else <--apiBaseUrl's origin>/.well-known/jwks.json\n" +
    "(the emulator's), else the production JWKS this build carries (none: give one of them).\n" +
    "Reasons: missing, malformed, unsupported-alg, unknown-kid, bad-key, mismatch.",
  flags: {
    ...formatFlag,
    body: {
      type: "string",
      placeholder: "FILE|-",
      required: true,
      description: "The raw body (- for stdin).",
    },
    signature: {
      type: "string",
      placeholder: "VALUE",
      description: "The Service-Webhook-Signature header value.",
    },
    ...jwksFlags,
  },
  examples: [
    'service webhooks verify --body body.json --signature "$SIG" --jwks http://127.0.0.1:40123/.well-known/jwks.json',
    'service webhooks verify --body - --signature "$SIG" --jwks jwks.json < body.json',
  ],
  async run({ flags }, ctx) {
    if (flags.signature === undefined) {
      throw new UsageError(
        `Missing --signature for "${ctx.path}": give the Service-Webhook-Signature header's value.`,
      );
    }
    let body: Uint8Array;
    try {
      const stream = flags.body === "-" ? ctx.io.stdin : (await Deno.open(flags.body)).readable;
      body = await readBody({ headers: new Headers(), body: stream }, {
        maxBytes: MAX_DELIVERY_BYTES,
        timeoutMs: 2 ** 31 - 1,
      });
    } catch (e) {
      throw new UsageError(
        e instanceof BodyRefused
          ? `--body is larger than ${MAX_DELIVERY_BYTES} bytes: not a delivery's body.`
          : `Cannot read --body ${JSON.stringify(flags.body)}: ${
            e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message
          }.`,
      );
    }
    const source = await jwksSource(flags.jwks, flags.apiBaseUrl);
    const { verifyWebhookSignatureWithKeys } = await import("../../webhooks/signature.ts");
    const check = await verifyWebhookSignatureWithKeys(body, flags.signature, source.keys);
    if (check.ok) {
      await ctx.out.outcome(`valid: signed by key ${check.kid}`, { valid: true, kid: check.kid });
      return 0;
    }
    if (check.reason === "jwks-unavailable") {
      throw new CliError(
        `Cannot check the signature: ${check.message} Check --jwks or --apiBaseUrl.`,
        ExitCode.platform,
      );
    }
    if (ctx.out.format !== "table") {
      await ctx.out.object({ valid: false, reason: check.reason, message: check.message });
    }
    throw new CliError(`invalid signature (${check.reason}): ${check.message}.`, ExitCode.failed);
  },
});
