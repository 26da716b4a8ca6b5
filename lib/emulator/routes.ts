/**
 * The route modules of the emulator, in one list: add an area here (its
 * schema is created at start, its routes are dispatched by the handler).
 *
 * @module
 */

import type { RouteModule } from "./router.ts";
import { vaultRoutes } from "./vault.ts";
import { walletRoutes } from "./wallets.ts";
import { assetRoutes } from "./assets.ts";
import { transactionRoutes } from "./transactions.ts";
import { adminRoutes } from "./admin.ts";
import { consoleRoutes } from "./console_page.ts";
import { webhooksRoutes } from "./webhooks_routes.ts";
import { IDEMPOTENCY_SCHEMA } from "./handler.ts";

const core: RouteModule = { name: "core", schema: IDEMPOTENCY_SCHEMA, routes: [] };

/** Every area of the emulator. */
export const ROUTE_MODULES: readonly RouteModule[] = [
  core,
  vaultRoutes,
  walletRoutes,
  assetRoutes,
  transactionRoutes,
  adminRoutes,
  consoleRoutes,
  webhooksRoutes,
];
