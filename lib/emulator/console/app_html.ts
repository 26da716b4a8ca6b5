/**
 * The console page: one HTML document with its style and script inline (no
 * build step, nothing fetched from elsewhere). The script reads the per-run
 * token from its own address (`?token=`), sends it in `X-Console-Token` with
 * every request to the console's JSON routes (`/console/api/...`), and polls
 * them every 2 s, so the page follows what happens without a reload:
 *
 * - Webhooks: every endpoint with its status (SUSPENDED in red) and the error
 *   rate of its last active hour (as the metric), with Reactivate; the selected endpoint's
 *   notifications with status, event and resource-id filters and paging; an
 *   attempts dialog per notification (time, status code or failure,
 *   duration) with Resend; "Resend notifications" (the last 24 hours, every
 *   status) after a confirmation that shows the count.
 * - Chain: the chain, the vault accounts and the latest transactions.
 *
 * Data is put in the page with `textContent` only (never as HTML).
 *
 * @module
 */

import { NOTIFICATION_STATUSES } from "../../core/mod.ts";

const STYLE = `
:root{--bg:#f6f7f9;--panel:#fff;--line:#e3e6eb;--text:#1d2330;--muted:#667085;--accent:#2f5bea;
--ok:#12805c;--okbg:#e6f6ef;--bad:#c4221f;--badbg:#fdecea;--warn:#a15c07;--warnbg:#fff4e0;--grey:#596273;--greybg:#eef0f3}
*{box-sizing:border-box}
html,body{margin:0;height:100%}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--text);background:var(--bg)}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
header{height:52px;display:flex;align-items:center;gap:18px;padding:0 20px;background:#111827;color:#fff}
header h1{font-size:16px;margin:0;font-weight:600;white-space:nowrap}
header .chain{color:#c7cdd8;font-size:13px;white-space:nowrap}
nav{display:flex;gap:4px}
nav button{background:transparent;color:#c7cdd8;border:0;padding:6px 12px;border-radius:6px;font:inherit;cursor:pointer}
nav button.on{background:#2a3447;color:#fff}
#live{margin-left:auto;font-size:12.5px;color:#c7cdd8;white-space:nowrap}
#live::before{content:"";display:inline-block;width:8px;height:8px;border-radius:50%;background:#3ccf8e;margin-right:6px}
#live.down::before{background:#f05252}
main{display:grid;grid-template-columns:340px 1fr;height:calc(100vh - 52px)}
main#view-chain{display:block;overflow:auto;padding:8px 22px 22px}
main#view-chain h2{font-size:15px;margin:16px 0 8px}
aside{border-right:1px solid var(--line);background:var(--panel);overflow:auto;padding:14px}
aside h2{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:2px 4px 10px}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 12px;margin-bottom:8px;cursor:pointer;background:#fff}
.card:hover{border-color:#b9c2d0}
.card.sel{border-color:var(--accent);box-shadow:0 0 0 1px var(--accent)}
.card.suspended{background:#fff8f7;border-color:#f3b8b4}
.card.suspended.sel{border-color:var(--bad);box-shadow:0 0 0 1px var(--bad)}
.card .row{display:flex;align-items:center;gap:8px}
.card .url{font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;margin:6px 0 2px}
.card .sub{color:var(--muted);font-size:12px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.card .rate{margin-left:auto;font-size:12px;color:var(--muted)}
.card button{margin-top:8px}
.pill{display:inline-block;font-size:11px;font-weight:700;letter-spacing:.04em;padding:2px 8px;border-radius:999px;background:var(--greybg);color:var(--grey)}
.pill.ENABLED,.pill.COMPLETED{background:var(--okbg);color:var(--ok)}
.pill.SUSPENDED,.pill.FAILED{background:var(--badbg);color:var(--bad)}
.pill.IN_PROGRESS{background:#e8eefe;color:var(--accent)}
.pill.ON_HOLD{background:var(--warnbg);color:var(--warn)}
section#content{overflow:auto;padding:18px 22px}
.empty{color:var(--muted);padding:30px 4px}
.head{display:flex;align-items:flex-start;gap:16px}
.head h2{margin:0 0 4px;font-size:18px;word-break:break-all}
.head .meta{color:var(--muted);font-size:12.5px}
.head .actions{margin-left:auto;display:flex;gap:8px;flex-shrink:0}
.banner{margin:12px 0 0;padding:10px 12px;border-radius:8px;background:var(--badbg);color:var(--bad);border:1px solid #f3b8b4}
.stats{display:grid;grid-template-columns:repeat(4,1fr);gap:10px;margin:14px 0}
.stat{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:10px 12px}
.stat .k{font-size:12px;color:var(--muted)}
.stat .v{font-size:20px;font-weight:650;margin-top:2px}
.stat .v.bad{color:var(--bad)}
.filters{display:flex;gap:8px;align-items:center;margin:4px 0 10px}
select,input{font:inherit;padding:6px 8px;border:1px solid #cfd5de;border-radius:6px;background:#fff}
input{width:260px}
button{font:inherit;font-size:13px;padding:6px 12px;border-radius:6px;border:1px solid #cfd5de;background:#fff;cursor:pointer}
button:hover{background:#f2f4f7}
button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
button.primary:hover{background:#2547c4}
button.danger{background:var(--bad);border-color:var(--bad);color:#fff}
button:disabled{opacity:.5;cursor:default}
table{border-collapse:collapse;width:100%;background:var(--panel);border:1px solid var(--line);border-radius:8px}
th,td{text-align:left;padding:7px 10px;border-bottom:1px solid var(--line);white-space:nowrap}
th{font-size:12px;color:var(--muted);font-weight:600;background:#fafbfc}
tbody tr.click{cursor:pointer}
tbody tr.click:hover{background:#f5f8ff}
td.trunc{max-width:220px;overflow:hidden;text-overflow:ellipsis}
.pager{display:flex;align-items:center;gap:8px;justify-content:flex-end;margin-top:10px;color:var(--muted)}
.ok{color:var(--ok);font-weight:600}.err{color:var(--bad);font-weight:600}
dialog{border:0;border-radius:10px;padding:0;width:720px;max-width:92vw;box-shadow:0 20px 60px rgba(0,0,0,.3)}
dialog::backdrop{background:rgba(17,24,39,.45)}
dialog .dh{padding:14px 18px;border-bottom:1px solid var(--line)}
dialog .dh h3{margin:0;font-size:16px}
dialog .db{padding:14px 18px;max-height:55vh;overflow:auto}
dialog .df{padding:12px 18px;border-top:1px solid var(--line);display:flex;gap:8px;justify-content:flex-end}
dl{display:grid;grid-template-columns:110px 1fr;gap:4px 10px;margin:0 0 12px}
dt{color:var(--muted)}dd{margin:0;word-break:break-all}
#toast{position:fixed;bottom:18px;left:50%;transform:translateX(-50%);background:#111827;color:#fff;padding:9px 16px;border-radius:8px;display:none;z-index:10}
#toast.show{display:block}
.hidden{display:none!important}
`;

const SCRIPT = `
"use strict";
const token = new URLSearchParams(location.search).get("token") || "";
const $ = (id) => document.getElementById(id);
const S = {tab: "webhooks", hooks: [], meta: null, sel: null, status: "", event: "", resourceId: "",
  offset: 0, limit: 25, page: null, open: null, detail: null, overview: null, busy: false};

async function api(method, path, body) {
  const headers = {"x-console-token": token};
  if (body !== undefined) headers["content-type"] = "application/json";
  const r = await fetch(path, {method, headers, cache: "no-store",
    body: body === undefined ? undefined : JSON.stringify(body)});
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  if (!r.ok) throw new Error((data && data.message) || ("HTTP " + r.status));
  return data;
}

function h(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of kids.flat()) if (c !== null && c !== undefined && c !== false) {
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

const pad = (n, w = 2) => String(n).padStart(w, "0");
function time(ms) {
  if (ms === null || ms === undefined) return "–";
  const d = new Date(ms);
  return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
    pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds()) + "." + pad(d.getMilliseconds(), 3);
}
function dur(ms) {
  if (ms < 1000) return Math.round(ms) + " ms";
  if (ms < 120000) return (ms / 1000).toFixed(ms < 10000 ? 2 : 1).replace(/\\.?0+$/, "") + " s";
  if (ms < 7200000) return Math.round(ms / 60000) + " min";
  return Math.round(ms / 3600000) + " h";
}
function pct(e, n) {
  if (!n) return "–";
  const p = e / n * 100;
  return (Math.round(p * 10) / 10) + "%";
}
const pill = (s) => h("span", {class: "pill " + s, text: s});
function toast(msg) {
  const t = $("toast");
  t.textContent = msg;
  t.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.remove("show"), 4000);
}
function live(ok, msg) {
  const l = $("live");
  l.classList.toggle("down", !ok);
  l.textContent = ok ? "Live · updated " + new Date().toLocaleTimeString() : "Disconnected: " + msg;
}
const windowLabel = () => !S.meta || S.meta.timeScale === 1 ? "last active hour" :
  "last active " + dur(S.meta.windowMs) + " (hour ÷ " + S.meta.timeScale + ")";
const selected = () => S.hooks.find((w) => w.id === S.sel) || null;

async function act(label, fn) {
  if (S.busy) return;
  S.busy = true;
  try { toast(await fn()); } catch (e) { toast(label + " failed: " + e.message); }
  finally { S.busy = false; }
  await refresh();
}
const reactivate = (w) => act("Reactivate", async () => {
  await api("POST", "/console/api/webhooks/" + encodeURIComponent(w.id) + "/enable");
  return "Reactivated " + w.url;
});
const resendOne = (wid, nid) => act("Resend", async () => {
  await api("POST", "/console/api/webhooks/" + encodeURIComponent(wid) + "/notifications/" +
    encodeURIComponent(nid) + "/resend");
  return "Notification resent";
});
async function askResendAll() {
  const w = selected();
  if (!w) return;
  try {
    const r = await api("GET", "/console/api/webhooks/" + encodeURIComponent(w.id) + "/resend_recent");
    $("confirm-text").textContent = "Resend " + r.count + " notification" + (r.count === 1 ? "" : "s") +
      " of the last 24 hours (every status) to " + w.url + "?";
    $("confirm-ok").textContent = "Resend " + r.count;
    $("confirm-ok").disabled = r.count === 0;
    $("confirm").showModal();
  } catch (e) { toast("Resend notifications failed: " + e.message); }
}
const resendAll = () => act("Resend notifications", async () => {
  const w = selected();
  $("confirm").close();
  const r = await api("POST", "/console/api/webhooks/" + encodeURIComponent(w.id) + "/resend_recent");
  return "Resent " + r.resent + " notification" + (r.resent === 1 ? "" : "s");
});

function renderHooks() {
  const list = $("hooks");
  $("hooks-title").textContent = "Endpoints (" + S.hooks.length + ")";
  list.replaceChildren(...(S.hooks.length ? S.hooks.map((w) => {
    const r = w.recent;
    return h("div", {class: "card" + (w.id === S.sel ? " sel" : "") + (w.status === "SUSPENDED" ? " suspended" : ""),
      "data-webhook": w.id, onclick: () => { if (S.sel !== w.id) { S.sel = w.id; S.offset = 0; S.page = null; refresh(); } }},
      h("div", {class: "row"}, pill(w.status),
        h("span", {class: "rate", title: "errors / attempts, " + windowLabel()},
          r.attempts ? pct(r.errors, r.attempts) + " errors · " + r.attempts + " attempt" +
            (r.attempts === 1 ? "" : "s") : "no attempts")),
      h("div", {class: "url", title: w.url, text: w.url}),
      h("div", {class: "sub mono", text: w.id}),
      w.status === "SUSPENDED" && h("button", {class: "danger", "data-action": "reactivate",
        onclick: (ev) => { ev.stopPropagation(); reactivate(w); }, text: "Reactivate"}));
  }) : [h("div", {class: "empty", text: "No webhook endpoints yet. Create one with POST /v1/webhooks."})]));
}

function renderDetail() {
  const w = selected();
  $("detail").classList.toggle("hidden", !w);
  $("nodetail").classList.toggle("hidden", !!w);
  if (!w) return;
  $("d-url").textContent = w.url;
  $("d-meta").textContent = w.id + " · events: " + w.events.join(", ") + (w.description ? " · " + w.description : "");
  $("d-status").replaceChildren(pill(w.status));
  for (const id of ["d-reactivate", "d-banner"]) $(id).classList.toggle("hidden", w.status !== "SUSPENDED");
  const r = w.recent;
  $("d-rate").textContent = r.attempts ? pct(r.errors, r.attempts) : "–";
  $("d-rate").classList.toggle("bad", r.attempts > 0 && r.errors / r.attempts > 0.5);
  $("d-rate-k").textContent = "Error rate, " + windowLabel();
  $("d-attempts").textContent = r.errors + " of " + r.attempts;
  $("d-total").textContent = S.page ? String(S.page.total) : "–";
  const ev = $("f-event");
  const want = ["", ...w.events];
  if (ev.options.length !== want.length || want.some((e, i) => ev.options[i].value !== e)) {
    ev.replaceChildren(...want.map((e) => h("option", {value: e, text: e || "All events"})));
    ev.value = want.includes(S.event) ? S.event : "";
  }
  const rows = $("rows");
  const p = S.page;
  if (!p) { rows.replaceChildren(); return; }
  rows.replaceChildren(...(p.data.length ? p.data.map((n) =>
    h("tr", {class: "click", "data-notification": n.id, onclick: () => openAttempts(n.id)},
      h("td", {text: time(n.createdAt)}),
      h("td", {text: n.eventType}),
      h("td", {class: "trunc mono", title: n.resourceId || "", text: n.resourceId || "–"}),
      h("td", {}, pill(n.status)),
      h("td", {text: String(n.attempts)}),
      h("td", {text: time(n.lastSentTime)}),
      h("td", {}, h("button", {"data-action": "attempts", text: "Attempts",
        onclick: (e) => { e.stopPropagation(); openAttempts(n.id); }})))
  ) : [h("tr", {}, h("td", {colspan: "7", class: "empty", text: "No notifications match."}))]));
  const from = p.total ? p.offset + 1 : 0;
  $("range").textContent = from + "–" + Math.min(p.offset + p.limit, p.total) + " of " + p.total;
  $("prev").disabled = p.offset === 0;
  $("next").disabled = p.offset + p.limit >= p.total;
}

function renderDialog() {
  const d = S.detail;
  if (!d) return;
  $("a-id").textContent = d.id;
  const meta = [
    h("dt", {text: "Event"}), h("dd", {text: d.eventType}),
    h("dt", {text: "Resource"}), h("dd", {class: "mono", text: d.resourceId || "–"}),
    h("dt", {text: "Status"}), h("dd", {}, pill(d.status)),
    h("dt", {text: "Created"}), h("dd", {text: time(d.createdAt)})];
  if (d.nextAttemptAt !== null) meta.push(h("dt", {text: "Next attempt"}), h("dd", {text: time(d.nextAttemptAt)}));
  $("a-meta").replaceChildren(...meta);
  $("a-rows").replaceChildren(...(d.attemptLog.length ? d.attemptLog.map((a, i) =>
    h("tr", {},
      h("td", {text: String(i + 1)}),
      h("td", {text: time(a.sentTime)}),
      h("td", {class: a.responseCode >= 200 && a.responseCode < 300 ? "ok" : "err",
        text: a.responseCode !== undefined ? "HTTP " + a.responseCode : a.failureReason}),
      h("td", {text: dur(a.duration)}))
  ) : [h("tr", {}, h("td", {colspan: "4", class: "empty", text: "No attempt yet."}))]));
}

function renderChain() {
  const o = S.overview;
  if (!o) return;
  $("accounts").replaceChildren(...o.accounts.map((a) =>
    h("tr", {}, h("td", {text: a.id}), h("td", {class: "mono", text: a.address}))));
  $("txs").replaceChildren(...(o.transactions.length ? o.transactions.map((t) =>
    h("tr", {}, h("td", {class: "mono trunc", text: t.id}), h("td", {text: t.operation}),
      h("td", {}, pill(t.status), t.subStatus ? " " + t.subStatus : ""),
      h("td", {class: "mono trunc", title: t.txHash || "", text: t.txHash || "–"}),
      h("td", {text: t.createdBy || "–"}), h("td", {text: t.fee || "–"}),
      h("td", {text: time(t.createdAt)})))
    : [h("tr", {}, h("td", {colspan: "7", class: "empty", text: "No transactions yet."}))]));
}

async function openAttempts(nid) {
  S.open = nid;
  S.detail = null;
  await loadDetail();
  renderDialog();
  if (!$("attempts").open) $("attempts").showModal();
}
async function loadDetail() {
  if (!S.open || !S.sel) return;
  S.detail = await api("GET", "/console/api/webhooks/" + encodeURIComponent(S.sel) + "/notifications/" +
    encodeURIComponent(S.open));
}

let inflight = null;
async function refresh() {
  if (inflight) return inflight;
  inflight = (async () => {
    try {
      if (S.tab === "chain" || !S.overview) {
        S.overview = await api("GET", "/console/api/overview");
        $("chain").textContent = "chain " + S.overview.chainId + " · " + S.overview.assetId +
          (S.overview.timeScale !== 1 ? " · time ÷ " + S.overview.timeScale : "");
        renderChain();
      }
      if (S.tab === "webhooks") {
        const r = await api("GET", "/console/api/webhooks");
        S.meta = r;
        S.hooks = r.data;
        if (!S.sel && S.hooks.length) S.sel = S.hooks[0].id;
        if (S.sel && !selected()) { S.sel = S.hooks.length ? S.hooks[0].id : null; S.page = null; }
        if (S.sel) {
          // an empty filter is no filter
          const q = new URLSearchParams({offset: S.offset, limit: S.limit, status: S.status, event: S.event,
            resourceId: S.resourceId});
          S.page = await api("GET", "/console/api/webhooks/" + encodeURIComponent(S.sel) + "/notifications?" + q);
        }
        if ($("attempts").open) { await loadDetail(); renderDialog(); }
        renderHooks();
        renderDetail();
      }
      live(true);
    } catch (e) {
      live(false, e.message);
    } finally {
      inflight = null;
    }
  })();
  return inflight;
}

function tab(name) {
  S.tab = name;
  for (const b of document.querySelectorAll("nav button")) b.classList.toggle("on", b.dataset.tab === name);
  for (const v of ["webhooks", "chain"]) $("view-" + v).classList.toggle("hidden", name !== v);
  refresh();
}

function refilter() { S.offset = 0; refresh(); }
$("f-status").addEventListener("change", (e) => { S.status = e.target.value; refilter(); });
$("f-event").addEventListener("change", (e) => { S.event = e.target.value; refilter(); });
let typing;
$("f-resource").addEventListener("input", (e) => {
  clearTimeout(typing);
  typing = setTimeout(() => { S.resourceId = e.target.value.trim(); refilter(); }, 250);
});
$("f-clear").addEventListener("click", () => {
  S.status = S.event = S.resourceId = "";
  $("f-status").value = $("f-event").value = $("f-resource").value = "";
  refilter();
});
$("prev").addEventListener("click", () => { S.offset = Math.max(0, S.offset - S.limit); refresh(); });
$("next").addEventListener("click", () => { S.offset += S.limit; refresh(); });
$("resend-all").addEventListener("click", askResendAll);
$("confirm-ok").addEventListener("click", resendAll);
$("confirm-cancel").addEventListener("click", () => $("confirm").close());
$("d-reactivate").addEventListener("click", () => { const w = selected(); if (w) reactivate(w); });
$("a-resend").addEventListener("click", () => { if (S.open) resendOne(S.sel, S.open); });
$("a-close").addEventListener("click", () => $("attempts").close());
$("attempts").addEventListener("close", () => { S.open = null; S.detail = null; });
for (const b of document.querySelectorAll("nav button")) b.addEventListener("click", () => tab(b.dataset.tab));
if (!token) live(false, "no token: open the consoleUrl that service emulator printed at start");
else { refresh(); setInterval(refresh, 2000); }
`;

const STATUS_OPTIONS = NOTIFICATION_STATUSES.map((s) => `<option value="${s}">${s}</option>`).join(
  "",
);

/**
 * The console page, its inline style and script marked with `nonce` (the
 * page's content security policy allows only those).
 *
 * @example
 * ```ts
 * const html = consolePageHtml("r4nd0m");
 * ```
 */
export function consolePageHtml(nonce: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>service emulator · console</title><link rel="icon" href="data:,">
<style nonce="${nonce}">${STYLE}</style></head>
<body>
<header><h1>service emulator</h1><span class="chain" id="chain"></span>
<nav><button data-tab="webhooks" class="on">Webhooks</button><button data-tab="chain">Chain</button></nav>
<span id="live">connecting…</span></header>
<main id="view-webhooks">
<aside><h2 id="hooks-title">Endpoints</h2><div id="hooks"></div></aside>
<section id="content">
<div id="nodetail" class="empty">Select an endpoint.</div>
<div id="detail" class="hidden">
<div class="head"><div><h2 id="d-url"></h2><div class="meta mono" id="d-meta"></div></div>
<div class="actions"><button id="d-reactivate" class="danger hidden">Reactivate</button>
<button id="resend-all" class="primary" title="Resend every notification of the last 24 hours, whatever its status">Resend notifications</button></div></div>
<div id="d-banner" class="banner hidden">This endpoint is <b>SUSPENDED</b> by the circuit breaker: nothing is delivered to it, new notifications wait ON_HOLD. Reactivate resumes delivery at once.</div>
<div class="stats">
<div class="stat"><div class="k">Status</div><div class="v" id="d-status"></div></div>
<div class="stat"><div class="k" id="d-rate-k">Error rate, last active hour</div><div class="v" id="d-rate"></div></div>
<div class="stat"><div class="k">Errors / attempts</div><div class="v" id="d-attempts"></div></div>
<div class="stat"><div class="k">Notifications (filtered)</div><div class="v" id="d-total"></div></div>
</div>
<div class="filters">
<select id="f-status" aria-label="Status"><option value="">All statuses</option>${STATUS_OPTIONS}</select>
<select id="f-event" aria-label="Event"><option value="">All events</option></select>
<input id="f-resource" placeholder="Resource id" aria-label="Resource id" autocomplete="off">
<button id="f-clear">Clear</button></div>
<table><thead><tr><th>Created</th><th>Event</th><th>Resource</th><th>Status</th><th>Attempts</th><th>Last attempt</th><th></th></tr></thead>
<tbody id="rows"></tbody></table>
<div class="pager"><span id="range"></span><button id="prev">‹ Previous</button><button id="next">Next ›</button></div>
</div>
</section>
</main>
<main id="view-chain" class="hidden"><section id="content-chain">
<h2>Vault accounts</h2><table><thead><tr><th>id</th><th>address</th></tr></thead><tbody id="accounts"></tbody></table>
<h2>Latest transactions</h2><table><thead><tr><th>id</th><th>operation</th><th>status</th><th>hash</th><th>by</th><th>fee</th><th>created</th></tr></thead><tbody id="txs"></tbody></table>
</section></main>
<dialog id="attempts"><div class="dh"><h3>Notification <span class="mono" id="a-id"></span></h3></div>
<div class="db"><dl id="a-meta"></dl>
<table><thead><tr><th>#</th><th>Sent</th><th>Result</th><th>Duration</th></tr></thead><tbody id="a-rows"></tbody></table></div>
<div class="df"><button id="a-resend" class="primary">Resend</button><button id="a-close">Close</button></div></dialog>
<dialog id="confirm"><div class="dh"><h3>Resend notifications</h3></div><div class="db"><p id="confirm-text"></p></div>
<div class="df"><button id="confirm-cancel">Cancel</button><button id="confirm-ok" class="primary">Resend</button></div></dialog>
<div id="toast" role="status"></div>
<script nonce="${nonce}">${SCRIPT}</script>
</body></html>`;
}
