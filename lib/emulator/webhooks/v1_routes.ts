/**
 * The two Webhooks V1 resend calls the older JavaScript SDK (`fireblocks-sdk`
 * 5.x, `resendWebhooks` and `resendTransactionWebhooksById`) and the
 * TypeScript SDK's `WebhooksApi` still make, answered over the emulator's
 * V2 endpoints (the emulator has no V1 webhooks of its own):
 *
 * - `POST /v1/webhooks/resend` → 200 `{messagesCount, webhooksCount}`: every
 *   endpoint's FAILED notifications of the last 24 hours are resent (as
 *   "resend failed" does, one job per endpoint). The TypeScript SDK's
 *   `ResendWebhooksResponse` names the count `messagesCount`, the older
 *   SDK's `webhooksCount`: both are given, with the same value.
 * - `POST /v1/webhooks/resend/{txId}` `{resendCreated?, resendStatusUpdated?}`
 *   → 200 `{success: true, webhooksCount}`: the transaction's
 *   `transaction.created` and/or `transaction.status.updated` notifications
 *   (any status, last 30 days) are resent on every endpoint, `webhooksCount`
 *   of them. The TypeScript SDK's `ResendWebhooksByTransactionIdResponse`
 *   requires `success`, the older SDK's `resendTransactionWebhooksById`
 *   types the answer as `{webhooksCount}`: both are given. A transaction
 *   this workspace does not have is a 404; neither flag set is a 400.
 *
 * @module
 */

import type { Route } from "../http/router.ts";
import type { EmulatorContext } from "../context.ts";
import { json } from "../http/reply.ts";
import { NotFoundError } from "../../core/mod.ts";
import { bad, bodyObject } from "./request_checks.ts";
import type { Webhooks } from "./start.ts";

function webhooksOf(ctx: EmulatorContext): Webhooks {
  if (!ctx.webhooks) throw new Error("the webhook side has not started");
  return ctx.webhooks;
}

/** The V1 resend routes. */
export const webhooksV1Routes: Route[] = [
  {
    method: "POST",
    pattern: "/v1/webhooks/resend",
    auth: "api",
    handle(_req, ctx) {
      const { engine } = webhooksOf(ctx);
      let count = 0;
      for (const w of engine.webhooks()) count += engine.resendFailed(w.id, {}).total;
      return json(200, { messagesCount: count, webhooksCount: count });
    },
  },
  {
    method: "POST",
    pattern: "/v1/webhooks/resend/:txId",
    auth: "api",
    handle(req, ctx) {
      const { engine } = webhooksOf(ctx);
      const txId = req.params.txId;
      if (!ctx.transactions.get(txId)) {
        throw new NotFoundError(`Transaction ${JSON.stringify(txId)} not found.`);
      }
      const b = bodyObject(req.body, "resend transaction webhooks");
      for (const k of ["resendCreated", "resendStatusUpdated"] as const) {
        if (b[k] !== undefined && typeof b[k] !== "boolean") bad(`${k} must be true or false.`);
      }
      const events = [
        ...(b.resendCreated === true ? ["transaction.created"] : []),
        ...(b.resendStatusUpdated === true ? ["transaction.status.updated"] : []),
      ];
      if (events.length === 0) {
        bad("Set resendCreated or resendStatusUpdated (or both) to true: nothing to resend.");
      }
      let count = 0;
      for (const w of engine.webhooks()) count += engine.resendByResource(w.id, txId, [], events);
      return json(200, { success: true, webhooksCount: count });
    },
  },
];
