/**
 * Whitelisted wallets: the emulator has none, so `GET /v1/external_wallets`,
 * `GET /v1/internal_wallets` and `GET /v1/contracts` answer empty lists.
 * Clients that resolve destinations through the whitelist (the web3
 * provider with `oneTimeAddressesEnabled: false`) then see the vault
 * accounts only, as in a workspace without whitelisted addresses.
 *
 * @module
 */

import { json } from "../http/reply.ts";
import type { RouteModule } from "../http/router.ts";

/** The (empty) whitelist routes. */
export const walletRoutes: RouteModule = {
  name: "wallets",
  routes: ["/v1/external_wallets", "/v1/internal_wallets", "/v1/contracts"].map((pattern) => ({
    method: "GET" as const,
    pattern,
    auth: "api" as const,
    handle: () => json(200, []),
  })),
};
