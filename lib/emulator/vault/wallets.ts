/**
 * Whitelisted wallets: `GET /v1/external_wallets`, `GET /v1/internal_wallets`
 * and `GET /v1/contracts` list the run's whitelist, and `GET …/{id}` reads
 * one (404 when it is not there) (`whitelist.ts`; empty at
 * start), each wallet with its one asset (`{id, status: "APPROVED", address,
 * tag}`) as the platform shows it. Clients that resolve destinations through
 * the whitelist (the web3 provider, or the bridge with
 * `--oneTimeAddressesEnabled false`) see these and the vault accounts.
 *
 * The admin route (API key in `X-API-Key`, like `/admin/faults`):
 * `POST /admin/wallets` `{type?: "EXTERNAL_WALLET"|"INTERNAL_WALLET"|"CONTRACT",
 * name?, address}` → 201 the wallet as listed.
 *
 * @module
 */

import { BadRequestError, NotFoundError } from "../../core/mod.ts";
import { json } from "../http/reply.ts";
import { route, type RouteModule } from "../http/router.ts";
import type { EmulatorContext } from "../context.ts";
import type { WalletType, WhitelistedWallet } from "./whitelist.ts";

const LISTS: [string, WalletType][] = [
  ["/v1/external_wallets", "EXTERNAL_WALLET"],
  ["/v1/internal_wallets", "INTERNAL_WALLET"],
  ["/v1/contracts", "CONTRACT"],
];

function view(ctx: EmulatorContext, w: WhitelistedWallet): Record<string, unknown> {
  return {
    id: w.id,
    name: w.name,
    customerRefId: "",
    assets: [{
      id: ctx.config.assetId,
      balance: "0",
      lockedAmount: "0",
      status: "APPROVED",
      address: w.address,
      tag: "",
    }],
  };
}

/** The whitelist routes and the admin route that fills it. */
export const walletRoutes: RouteModule = {
  name: "wallets",
  routes: [
    ...LISTS.map(([pattern, type]) =>
      route(
        "GET",
        pattern,
        "api",
        (_req, ctx) => json(200, ctx.whitelist.list(type).map((w) => view(ctx, w))),
      )
    ),
    ...LISTS.map(([pattern, type]) =>
      route("GET", `${pattern}/:walletId`, "api", (req, ctx) => {
        const w = ctx.whitelist.find(type, req.params.walletId);
        if (!w) {
          throw new NotFoundError(
            `No ${type} ${JSON.stringify(req.params.walletId)} is whitelisted in this emulator ` +
              "(add one with POST /admin/wallets).",
          );
        }
        return json(200, view(ctx, w));
      })
    ),
    route("POST", "/admin/wallets", "admin", (req, ctx) => {
      const body = req.body;
      if (typeof body !== "object" || body === null || Array.isArray(body)) {
        throw new BadRequestError("Expected a JSON object {type, name, address}.");
      }
      const w = ctx.whitelist.add(body as Record<string, unknown>);
      ctx.log(`whitelisted ${w.type} ${w.id} (${w.name}) ${w.address}`);
      return json(201, { type: w.type, ...view(ctx, w) });
    }),
  ],
};
