/**
 * The transaction routes (creation of TRANSFER, CONTRACT_CALL including
 * contract creation, and TYPED_MESSAGE; listing, reading, cancelling; the fee
 * estimates of `fee_estimates.ts`) and the admin routes that approve, reject
 * or force the status of a transaction. HTTP only: the checks of a request
 * are in `request_check.ts`, the lifecycle in `engine.ts` (`ctx.transactions`),
 * the SQL in `store.ts`.
 *
 * @module
 */

import { json } from "../http/reply.ts";
import { BadRequestError, NotFoundError } from "../../core/mod.ts";
import { withTransaction } from "../store.ts";
import { nodeRoute, type Route, route, type RouteModule } from "../http/router.ts";
import { FORCEABLE_STATUSES } from "./status.ts";
import { parseTransactionListQuery } from "./list_query.ts";
import { estimateNetworkFee, estimateTransactionFee } from "./fee_estimates.ts";

/** An admin route acting on transaction `:id`: `POST /admin/transactions/:id/<action>`. */
const admin = (action: string, handle: Route["handle"]) =>
  route("POST", `/admin/transactions/:id/${action}`, "admin", handle);

/** The transaction routes. */
export const transactionRoutes: RouteModule = {
  name: "transactions",
  start(ctx) {
    ctx.transactions.resume();
  },
  async stop(ctx) {
    await ctx.transactions.stop();
  },
  routes: [
    nodeRoute("POST", "/v1/transactions", (req, ctx) =>
      // the transaction and the answer to its Idempotency-Key are stored in one SQLite
      // transaction: a SIGKILL keeps both or neither (else a retry with the key would meet
      // its own externalTxId as "already used")
      withTransaction(ctx.store.db, () => {
        const t = ctx.transactions.create(req.body, req.user?.id);
        // 200, as the SDK's createTransaction documents (the platform's prose says 201)
        const reply = json(200, { id: t.id, status: t.status });
        req.keep?.(reply);
        return reply;
      })),
    nodeRoute("GET", "/v1/transactions", (req, ctx) => {
      const page = ctx.transactions.list(parseTransactionListQuery(req.query));
      // the paging headers the SDKs follow: a URL whose cursor holds the whole query
      const url = (param: string, cursor: string) =>
        `${ctx.baseUrl ?? ""}/v1/transactions?${param}=${encodeURIComponent(cursor)}`;
      const headers: Record<string, string> = {};
      if (page.next) headers["next-page"] = url("next", page.next);
      if (page.prev) headers["prev-page"] = url("prev", page.prev);
      return json(200, page.records, headers);
    }),
    nodeRoute(
      "POST",
      "/v1/transactions/estimate_fee",
      async (req, ctx) => json(200, await estimateTransactionFee(ctx, req.body)),
    ),
    nodeRoute(
      "GET",
      "/v1/estimate_network_fee",
      async (req, ctx) => json(200, await estimateNetworkFee(ctx, req.query.get("assetId"))),
    ),
    nodeRoute("GET", "/v1/transactions/:id", (req, ctx) => {
      // the stored JSON as it is: polling is the hottest path
      const t = ctx.transactions.records.recordJson(req.params.id);
      if (!t) throw new NotFoundError(`Transaction "${req.params.id}" not found.`);
      return { status: 200, text: { contentType: "application/json; charset=utf-8", value: t } };
    }),
    nodeRoute("GET", "/v1/transactions/external_tx_id/:externalTxId", (req, ctx) => {
      const t = ctx.transactions.records.byExternalId(req.params.externalTxId);
      if (!t) {
        throw new NotFoundError(`No transaction with externalTxId "${req.params.externalTxId}".`);
      }
      return json(200, t);
    }),
    nodeRoute("POST", "/v1/transactions/:id/cancel", (req, ctx) => {
      ctx.transactions.cancel(req.params.id);
      return json(200, { success: true });
    }),
    admin("approve", (req, ctx) => json(200, ctx.transactions.approve(req.params.id))),
    admin("reject", (req, ctx) => {
      return json(200, ctx.transactions.force(req.params.id, "REJECTED", "REJECTED_BY_USER"));
    }),
    admin("status", (req, ctx) => {
      const b = (req.body ?? {}) as Record<string, unknown>;
      const status = String(b.status ?? "").toUpperCase();
      const forceable = FORCEABLE_STATUSES.find((s) => s === status);
      if (!forceable) {
        throw new BadRequestError(`status must be one of ${FORCEABLE_STATUSES.join(", ")}.`);
      }
      const sub = b.subStatus === undefined ? undefined : String(b.subStatus);
      return json(200, ctx.transactions.force(req.params.id, forceable, sub));
    }),
  ],
};
