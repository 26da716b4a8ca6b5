/**
 * Vault accounts: `GET /v1/vault/accounts_paged`, `GET
 * /v1/vault/accounts/{id}`, `GET /v1/vault/accounts/{id}/{assetId}` and
 * `GET /v1/vault/accounts/{id}/{assetId}/addresses_paginated`. Every account
 * holds the chain's base asset; balances are read from the node, so they
 * are real.
 *
 * @module
 */

import { accountName, requireAsset } from "./identity.ts";
import { formatEther } from "viem";
import { NotFoundError } from "../../core/mod.ts";
import { bad, intParam } from "../http/params.ts";
import { ApiError, ErrorCode, json } from "../http/reply.ts";
import { cursorInt, encodeCursor } from "../http/cursor.ts";
import { nodeRoute, type RouteModule, type RouteRequest } from "../http/router.ts";
import type { EmulatorContext } from "../context.ts";
import { nodeOf } from "../chain.ts";

/** Reads vault account `id` (404 if it does not exist). */
export function requireAccount(ctx: EmulatorContext, id: string): number {
  if (!ctx.keys.has(id)) {
    throw new NotFoundError(`Vault account "${id}" not found.`);
  }
  return Number(id);
}

async function assetOf(ctx: EmulatorContext, index: number) {
  const { client } = nodeOf(ctx);
  const [wei, block] = await Promise.all([
    client.getBalance({ address: ctx.keys.address(index) }),
    client.getBlockNumber(),
  ]);
  const amount = formatEther(wei);
  return {
    id: ctx.config.assetId,
    total: amount,
    balance: amount,
    available: amount,
    pending: "0",
    frozen: "0",
    lockedAmount: "0",
    staked: "0",
    blockHeight: block.toString(),
  };
}

async function account(ctx: EmulatorContext, index: number) {
  return {
    id: String(index),
    name: accountName(index),
    hiddenOnUI: false,
    autoFuel: false,
    assets: [await assetOf(ctx, index)],
  };
}

/** `read()`, or a 502 when the node cannot be read. */
function fromNode<T>(read: () => Promise<T>): Promise<T> {
  return read().catch((e) => {
    throw new ApiError(
      502,
      `The emulator cannot read balances from its node: ${(e as Error)?.message?.split("\n")[0]}.`,
      ErrorCode.internal,
    );
  });
}

/** The one address of the route's account on its asset (404 when either is unknown). */
function addressOfRoute(req: RouteRequest, ctx: EmulatorContext) {
  const i = requireAccount(ctx, req.params.id);
  requireAsset(ctx, req.params.assetId);
  return {
    assetId: ctx.config.assetId,
    address: ctx.keys.address(i),
    description: "",
    tag: "",
    type: "Permanent",
    legacyAddress: "",
    enterpriseAddress: "",
    bip44AddressIndex: 0,
    userDefined: false,
  };
}

const A = "/v1/vault/accounts/:id/:assetId";

/** The vault routes. */
export const vaultRoutes: RouteModule = {
  name: "vault",
  routes: [
    nodeRoute("GET", "/v1/vault/accounts_paged", async (req, ctx) => {
      const q = req.query;
      const limit = intParam(q, "limit", 200, 1, 500);
      const order = (q.get("orderBy") ?? "DESC").toUpperCase();
      if (order !== "ASC" && order !== "DESC") {
        bad("orderBy must be ASC or DESC.");
      }
      let ids = Array.from({ length: ctx.keys.count }, (_, i) => i);
      const assetId = q.get("assetId");
      if (assetId && assetId !== ctx.config.assetId) ids = [];
      const prefix = q.get("namePrefix");
      if (prefix) ids = ids.filter((i) => accountName(i).startsWith(prefix));
      const suffix = q.get("nameSuffix");
      if (suffix) ids = ids.filter((i) => accountName(i).endsWith(suffix));
      if (order === "DESC") ids.reverse();
      const before = q.get("before");
      const after = q.get("after");
      let start = 0;
      let end = Math.min(ids.length, limit);
      if (after) {
        const pos = ids.indexOf(cursorInt("after", after, "account"));
        start = pos === -1 ? ids.length : pos + 1;
        end = Math.min(ids.length, start + limit);
      } else if (before) {
        const pos = ids.indexOf(cursorInt("before", before, "account"));
        end = pos === -1 ? 0 : pos;
        start = Math.max(0, end - limit);
      }
      const pageIds = ids.slice(start, end);
      const accounts = await fromNode(() => Promise.all(pageIds.map((i) => account(ctx, i))));
      const paging: Record<string, string> = {};
      const cursor = (account: number) => encodeCursor({ account });
      if (start > 0 && pageIds.length) paging.before = cursor(pageIds[0]);
      if (end < ids.length && pageIds.length) paging.after = cursor(pageIds[pageIds.length - 1]);
      return json(200, { accounts, paging });
    }),
    nodeRoute("GET", "/v1/vault/accounts/:id", async (req, ctx) => {
      const i = requireAccount(ctx, req.params.id);
      return json(200, await fromNode(() => account(ctx, i)));
    }),
    nodeRoute("GET", A, async (req, ctx) => {
      const i = requireAccount(ctx, req.params.id);
      requireAsset(ctx, req.params.assetId);
      return json(200, await fromNode(() => assetOf(ctx, i)));
    }),
    nodeRoute(
      "GET",
      `${A}/addresses_paginated`,
      (req, ctx) => json(200, { addresses: [addressOfRoute(req, ctx)], paging: {} }),
    ),
    // the older, unpaged listing (the older SDK's getDepositAddresses)
    nodeRoute("GET", `${A}/addresses`, (req, ctx) => json(200, [addressOfRoute(req, ctx)])),
  ],
};
