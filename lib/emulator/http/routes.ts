/**
 * The route modules of the emulator, in one list: add an area here (its
 * routes are dispatched by the handler, its start and stop called).
 *
 * @module
 */

import type { RouteModule } from "./router.ts";
import { vaultRoutes } from "../vault/accounts.ts";
import { walletRoutes } from "../vault/wallets.ts";
import { assetRoutes } from "../vault/assets.ts";
import { transactionRoutes } from "../transactions/routes.ts";
import { adminRoutes } from "../faults/routes.ts";
import { consoleRoutes } from "../console/page.ts";
import { webhooksRoutes } from "../webhooks/routes.ts";

/** Every area of the emulator. */
export const ROUTE_MODULES: readonly RouteModule[] = [
  vaultRoutes,
  walletRoutes,
  assetRoutes,
  transactionRoutes,
  adminRoutes,
  consoleRoutes,
  webhooksRoutes,
];
