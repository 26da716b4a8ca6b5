/**
 * The webhook side's section of the console page: the endpoints with their
 * status and error rate, and the latest notifications.
 *
 * @module
 */

import type { WebhookEngine } from "./engine.ts";

function esc(s: unknown): string {
  return String(s ?? "").replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The HTML fragment (a `<section>`) of the console page.
 *
 * @example
 * ```ts
 * const html = webhooksConsoleSection(engine);
 * ```
 */
export function webhooksConsoleSection(engine: WebhookEngine): string {
  const hooks = engine.webhooks();
  const recent = engine.store.latestNotifications(50);
  const hookRows = hooks.map((w) =>
    `<tr><td><code>${esc(w.id)}</code></td><td>${esc(w.url)}</td><td>${
      esc(w.events.join(", "))
    }</td>` +
    `<td class="st-${esc(w.status)}">${esc(w.status)}</td><td>${
      esc(engine.errorRatePercent(w.id))
    }%</td></tr>`
  ).join("");
  const nRows = recent.map((n) =>
    `<tr><td><code>${esc(n.id)}</code></td><td><code>${esc(n.webhookId)}</code></td>` +
    `<td>${esc(n.eventType)}</td><td>${esc(n.resourceId)}</td><td>${esc(n.status)}</td>` +
    `<td>${esc(n.attempts)}</td><td>${esc(new Date(n.updatedAt).toISOString())}</td></tr>`
  ).join("");
  return `<section id="webhooks"><h2>Webhooks</h2>
<table><thead><tr><th>id</th><th>url</th><th>events</th><th>status</th><th>error rate (last active hour)</th></tr></thead>
<tbody>${hookRows || '<tr><td colspan="5">No webhook endpoints yet.</td></tr>'}</tbody></table>
<h3>Recent notifications</h3>
<table><thead><tr><th>id</th><th>webhook</th><th>event</th><th>resource</th><th>status</th><th>attempts</th><th>updated</th></tr></thead>
<tbody>${nRows || '<tr><td colspan="7">No notifications yet.</td></tr>'}</tbody></table></section>`;
}
