/**
 * The admin routes of the faults (`GET`, `POST`, `DELETE /admin/faults[/{id}]`,
 * docs/emulator.md), for tests and demos, not part of the platform API:
 * `X-API-Key` alone (no JWT, so `curl` works), never affected by faults.
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
