/**
 * The console's own routes: its page (`app_html.ts`), the overview it
 * fetches (the chain, the vault accounts, the latest transactions; the
 * webhook side adds its own `/console/api/webhooks...`) and the public JWKS
 * of the webhook signing keys (empty until the webhook side has started).
 * The console routes have `auth: "console"` (`../http/console_guard.ts`);
 * the page is sent with a content security policy that allows only its own
 * inline script and style (by nonce) and requests to its own origin, and may
 * not be framed.
 *
 * @module
 */

import { route, type RouteModule } from "../http/router.ts";
import { json } from "../http/reply.ts";
import type { EmulatorContext } from "../context.ts";
import { latestTransactions } from "../transactions/store.ts";
import { consolePageHtml } from "./app_html.ts";
import { toBase64Url } from "../../core/mod.ts";

function overview(ctx: EmulatorContext): Record<string, unknown> {
  // who made each: the API user's name and role (an id no user of this run has: as it is)
  const users = new Map(ctx.apiUsers.map((u) => [u.id, `${u.name} (${u.role})`]));
  const transactions = latestTransactions(ctx.store, 50).map((t) => ({
    ...t,
    createdBy: users.get(String(t.createdBy)) ?? t.createdBy ?? "",
  }));
  return {
    chainId: ctx.config.chainId,
    assetId: ctx.config.assetId,
    timeScale: ctx.config.timeScale,
    accounts: Array.from({ length: ctx.keys.count }, (_, i) => ({
      id: String(i),
      address: ctx.keys.address(i),
    })),
    transactions,
  };
}

/** The console's page and overview, and the public JWKS. */
export const consoleRoutes: RouteModule = {
  name: "console",
  routes: [
    route("GET", "/console", "console", () => {
      const nonce = toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
      return {
        status: 200,
        text: { contentType: "text/html; charset=utf-8", value: consolePageHtml(nonce) },
        headers: {
          "content-security-policy":
            `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; ` +
            "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; " +
            "frame-ancestors 'none'",
          "x-frame-options": "DENY",
          "referrer-policy": "no-referrer",
          "x-content-type-options": "nosniff",
        },
      };
    }),
    route("GET", "/console/api/overview", "console", (_req, ctx) => json(200, overview(ctx))),
    route("GET", "/.well-known/jwks.json", "none", (_req, ctx) => ({
      status: 200,
      body: ctx.webhooks?.jwks() ?? { keys: [] },
    })),
  ],
};
