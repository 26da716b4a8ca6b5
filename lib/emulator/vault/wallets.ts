/**
 * Whitelisted wallets: the external, internal and contract listings of the
 * run's whitelist (`whitelist.ts`; empty at start) and a read of one, each
 * wallet with its one asset as the platform shows it, and the admin route
 * `POST /admin/wallets` that fills it. Clients that resolve destinations
 * through the whitelist (the web3 provider, or the bridge with
 * `--oneTimeAddressesEnabled false`) see these and the vault accounts.
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
