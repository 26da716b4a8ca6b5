/**
 * Public pages: `/console` (a minimal HTML page listing the vault accounts
 * and the latest transactions; other areas append sections to the context's
 * `consoleSections`) and `/.well-known/jwks.json` (the webhook signing keys
 * of the context's `webhooks`; empty until the webhook side has started).
 *
 * @module
 */

import type { RouteModule } from "../http/router.ts";
import type { EmulatorContext } from "../context.ts";
import { latestTransactions } from "./latest_transactions.ts";

function esc(s: unknown): string {
  return String(s ?? "").replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function render(ctx: EmulatorContext): string {
  const accounts = Array.from(
    { length: ctx.keys.count },
    (_, i) => `<tr><td>${i}</td><td><code>${esc(ctx.keys.address(i))}</code></td></tr>`,
  ).join("");
  let txRows = "";
  try {
    txRows = latestTransactions(ctx.store, 50).map((r) =>
      `<tr><td><code>${esc(r.id)}</code></td><td>${esc(r.operation)}</td><td>${esc(r.status)}${
        r.subStatus ? ` (${esc(r.subStatus)})` : ""
      }</td><td><code>${esc(r.txHash)}</code></td><td>${
        esc(new Date(r.createdAt).toISOString())
      }</td></tr>`
    ).join("");
  } catch { /* no transactions table */ }
  return `<!doctype html><html><head><meta charset="utf-8"><title>service emulator</title>
<style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}</style>
</head><body><h1>service emulator</h1>
<p>Chain ${ctx.config.chainId}, asset <code>${esc(ctx.config.assetId)}</code>.</p>
<h2>Vault accounts</h2><table><thead><tr><th>id</th><th>address</th></tr></thead><tbody>${accounts}</tbody></table>
<h2>Latest transactions</h2><table><thead><tr><th>id</th><th>operation</th><th>status</th><th>hash</th><th>created</th></tr></thead>
<tbody>${txRows || '<tr><td colspan="5">No transactions yet.</td></tr>'}</tbody></table>
${ctx.consoleSections.map((s) => s()).join("\n")}
</body></html>`;
}

/** The public pages. */
export const consoleRoutes: RouteModule = {
  name: "console",
  routes: [
    {
      method: "GET",
      pattern: "/console",
      auth: "none",
      handle: (_req, ctx) => ({
        status: 200,
        text: { contentType: "text/html; charset=utf-8", value: render(ctx) },
      }),
    },
    {
      method: "GET",
      pattern: "/.well-known/jwks.json",
      auth: "none",
      handle: (_req, ctx) => ({ status: 200, body: ctx.webhooks?.jwks() ?? { keys: [] } }),
    },
  ],
};
