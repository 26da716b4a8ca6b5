/**
 * The emulator's webhook side in one object, so that wiring it into the
 * emulator is a handful of lines: tables in the emulator's database, the
 * signing key (kept in the database, so `--state` keeps the JWKS stable
 * across restarts), the delivery engine, the REST handler, the events sink
 * and a console fragment.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { SnapshotPager } from "./notification_paging.ts";
import { WebhookEngine, type WebhookEvent } from "./engine.ts";
import { type Jwks, WebhookSigner } from "./signing/signer.ts";
import { WebhookStore } from "./store.ts";
import { type ApiRequest, type ApiResult, errorResult, handleWebhooksApi } from "./api.ts";
import type { BreakerConfig } from "../../webhooks/mod.ts";

/** Options of {@linkcode startWebhooks}. */
export interface WebhooksOptions {
  /** The emulator's database (file with `--state`, else `:memory:`). */
  db: DatabaseSync;
  /** Divides every retry delay and breaker duration. Default 1. */
  timeScale?: number;
  /** HTTP timeout of one delivery attempt in ms. Default 10 000. */
  deliveryTimeoutMs?: number;
  /** Attempts in flight per endpoint. Default 8. */
  concurrency?: number;
  /** Breaker parameters before scaling (breaker.md §3 defaults). */
  breaker?: BreakerConfig;
  /** Workspace id put in payloads. */
  workspaceId?: string;
  /** The workspace admins' e-mail addresses. */
  admins?: () => string[];
  /** Log lines (standard error). */
  log?: (line: string) => void;
  /** Clock. */
  now?: () => number;
  /**
   * WebCrypto worker threads that make the RS512 signatures when OpenSSL's
   * libcrypto cannot be used. Default 2; 0 signs on the main thread.
   */
  signWorkers?: number;
  /** libcrypto names or paths to try (default the OS's usual ones; `[]`: WebCrypto only). */
  libcryptoPaths?: readonly string[];
}

/** The running webhook side; see {@linkcode startWebhooks}. */
export interface Webhooks {
  /** The delivery engine. */
  engine: WebhookEngine;
  /** The JWKS document to serve at `/.well-known/jwks.json`. */
  jwks(): Jwks;
  /**
   * Handles a Webhooks V2 or admin request (path without `/v1`); `null` when
   * the path is not one of them. Never throws: errors become `{message, code}`.
   */
  handle(req: ApiRequest): ApiResult | null;
  /** The events sink: creates notifications for the subscribed endpoints. */
  emit(event: WebhookEvent): void;
  /** An HTML fragment for the console page. */
  consoleHtml(): string;
  /** Stops delivery (attempts in flight are made again after a restart). */
  stop(): Promise<void>;
}

const KEY_META = "signing_key_jwk";

/**
 * Creates the tables, loads or makes the signing key, and starts delivering
 * what is due (after a restart: what was pending).
 *
 * @example
 * ```ts
 * const webhooks = await startWebhooks({ db, timeScale: 1000, log: (l) => io.log(l) });
 * const r = webhooks.handle({ method: "GET", path: "/webhooks", query, body: undefined });
 * ```
 */
export async function startWebhooks(opts: WebhooksOptions): Promise<Webhooks> {
  const store = new WebhookStore(opts.db);
  const stored = store.getMeta(KEY_META);
  let signer: WebhookSigner;
  if (stored) {
    signer = await WebhookSigner.fromPrivateJwk(JSON.parse(stored));
  } else {
    signer = await WebhookSigner.generate();
    store.setMeta(KEY_META, JSON.stringify(signer.toPrivateJwk()));
  }
  await signer.useFastSigning({
    workers: opts.signWorkers ?? 2,
    log: opts.log,
    libcryptoPaths: opts.libcryptoPaths,
  });
  const now = opts.now ?? Date.now;
  const engine = new WebhookEngine({
    store,
    signer,
    timeScale: opts.timeScale,
    deliveryTimeoutMs: opts.deliveryTimeoutMs,
    concurrency: opts.concurrency,
    breaker: opts.breaker,
    workspaceId: opts.workspaceId,
    admins: opts.admins,
    log: opts.log,
    now,
  });
  engine.start();
  const pager = new SnapshotPager(now);
  const log = opts.log ?? (() => {});
  return {
    engine,
    jwks: () => signer.jwks(),
    handle(req) {
      try {
        return handleWebhooksApi(engine, pager, req, now);
      } catch (e) {
        const r = errorResult(e);
        if (r.status >= 500) {
          log(`webhooks API error on ${req.method} ${req.path}: ${(e as Error)?.stack ?? e}`);
        }
        return r;
      }
    },
    emit(event) {
      engine.publish(event);
    },
    consoleHtml: () => renderConsole(engine),
    async stop() {
      await engine.stop();
      signer.close();
    },
  };
}

function esc(s: unknown): string {
  return String(s ?? "").replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function renderConsole(engine: WebhookEngine): string {
  const hooks = engine.webhooks();
  const recent = engine.store.stmt(
    `SELECT id, webhook_id, event_type, resource_id, status, attempts, updated_at
     FROM wh_notifications ORDER BY seq DESC LIMIT 50`,
  ).all() as Record<string, unknown>[];
  const hookRows = hooks.map((w) =>
    `<tr><td><code>${esc(w.id)}</code></td><td>${esc(w.url)}</td><td>${
      esc(w.events.join(", "))
    }</td>` +
    `<td class="st-${esc(w.status)}">${esc(w.status)}</td><td>${
      esc(engine.errorRatePercent(w.id))
    }%</td></tr>`
  ).join("");
  const nRows = recent.map((n) =>
    `<tr><td><code>${esc(n.id)}</code></td><td><code>${esc(n.webhook_id)}</code></td>` +
    `<td>${esc(n.event_type)}</td><td>${esc(n.resource_id)}</td><td>${esc(n.status)}</td>` +
    `<td>${esc(n.attempts)}</td><td>${
      esc(new Date(n.updated_at as number).toISOString())
    }</td></tr>`
  ).join("");
  return `<section id="webhooks"><h2>Webhooks</h2>
<table><thead><tr><th>id</th><th>url</th><th>events</th><th>status</th><th>error rate (last active hour)</th></tr></thead>
<tbody>${hookRows || '<tr><td colspan="5">No webhook endpoints yet.</td></tr>'}</tbody></table>
<h3>Recent notifications</h3>
<table><thead><tr><th>id</th><th>webhook</th><th>event</th><th>resource</th><th>status</th><th>attempts</th><th>updated</th></tr></thead>
<tbody>${nRows || '<tr><td colspan="7">No notifications yet.</td></tr>'}</tbody></table></section>`;
}
