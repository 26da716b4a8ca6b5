/**
 * The route modules of the emulator, in one list: add an area here (its
 * schema is created at start, its routes are dispatched by the handler).
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
import { IDEMPOTENCY_SCHEMA } from "./idempotency_store.ts";

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
