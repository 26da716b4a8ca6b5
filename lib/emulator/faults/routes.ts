/**
 * The admin endpoint, for tests and demos (not part of the platform API).
 * Protected by the emulator's API key in `X-API-Key` (no JWT, so `curl`
 * works); never affected by faults.
 *
 * - `GET /admin/faults` → `{faults: [...]}`
 * - `POST /admin/faults` `{kind, ...}` (see `faults.ts`) → 201 the rule with its `id`
 * - `DELETE /admin/faults/{id}`, `DELETE /admin/faults` (all) → 200
 * - `POST /admin/transactions/{id}/approve` → a held transaction continues
 * - `POST /admin/transactions/{id}/reject` → REJECTED (`REJECTED_BY_USER`)
 * - `POST /admin/transactions/{id}/status` `{status, subStatus?}` → forces a
 *   final status (REJECTED, BLOCKED, CANCELLED, TIMEOUT, FAILED)
 *
 * @module
 */

import { NotFoundError } from "../../core/mod.ts";
import { json } from "../http/reply.ts";
import { route, type RouteModule } from "../http/router.ts";
import { parseFaultSpec } from "./faults.ts";

/** The admin routes for faults (transaction admin routes live in `../transactions/routes.ts`). */
export const adminRoutes: RouteModule = {
  name: "admin",
  routes: [
    route("GET", "/admin/faults", "admin", (_req, ctx) => json(200, { faults: ctx.faults.list() })),
    route("POST", "/admin/faults", "admin", (req, ctx) => {
      const rule = ctx.faults.add(parseFaultSpec(req.body));
      ctx.log(`fault added: ${JSON.stringify(rule)}`);
      return json(201, rule);
    }),
    route("DELETE", "/admin/faults", "admin", (_req, ctx) => {
      ctx.faults.clear();
      return json(200, { faults: [] });
    }),
    route("DELETE", "/admin/faults/:id", "admin", (req, ctx) => {
      if (!ctx.faults.remove(req.params.id)) {
        throw new NotFoundError(`No fault "${req.params.id}".`);
      }
      return json(200, { faults: ctx.faults.list() });
    }),
  ],
};
