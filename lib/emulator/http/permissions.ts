/**
 * Who may call what: the platform's API user roles and the one permission
 * table of every platform call the emulator serves. Each row names the call
 * (method and route pattern), the official TypeScript SDK's operation, and
 * the roles allowed. Where the SDK's documentation of the operation has an
 * "Endpoint Permission: ..." note, the row is that note (the SDK's "Owner"
 * is the workspace owner, not an API user role, and is left out);
 * `tests/emulator/permissions_test.ts` reads the SDK and checks every such
 * row against it. Where the SDK has no note, the row is the project's choice,
 * marked `ours` with the reason: following the platform's documented roles,
 * a reading call is open to every role (a Viewer reads), and a writing call
 * to every role but Viewer.
 *
 * @module
 */

/** The platform's API user roles, as the platform names them. */
export const API_USER_ROLES = [
  "ADMIN",
  "NON_SIGNING_ADMIN",
  "SIGNER",
  "APPROVER",
  "EDITOR",
  "VIEWER",
] as const;

/** An API user's role. */
export type ApiUserRole = (typeof API_USER_ROLES)[number];

/** What a role may do, in words (for a refusal's message and the docs). */
export const ROLE_SUMMARY: Record<ApiUserRole, string> = {
  ADMIN: "make every call",
  NON_SIGNING_ADMIN: "make every call but a transaction fee estimate",
  SIGNER: "read, send and resend, but not manage webhooks",
  APPROVER: "read, send and use the V1 resends, but not manage or resend V2 webhooks",
  EDITOR: "read, send and resend, but not manage webhooks",
  VIEWER: "only read",
};

/** One row of the table. */
export interface Permission {
  /** HTTP method of the route. */
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  /** The emulator's route pattern (`/v1/transactions/:id`). */
  pattern: string;
  /** The official SDK's operation (`transactions-api.ts#getTransaction`), when it has one. */
  sdk?: string;
  /** The roles allowed. */
  roles: readonly ApiUserRole[];
  /** Set when the row is the project's choice (the SDK has no note): why. */
  ours?: string;
}

const ALL = API_USER_ROLES;
const WRITERS = API_USER_ROLES.filter((r) => r !== "VIEWER");
const WEBHOOK_ADMINS: readonly ApiUserRole[] = ["ADMIN", "NON_SIGNING_ADMIN"];
const FEE_ESTIMATORS = WRITERS.filter((r) => r !== "NON_SIGNING_ADMIN");
const WEBHOOK_RESENDERS = WRITERS.filter((r) => r !== "APPROVER");

const READ = "the SDK has no note: a read, open to every role (a Viewer reads)";
const WRITE = "the SDK has no note: a write, open to every role but Viewer (as cancelTransaction)";
const OLD = "not in the current SDK (the older SDK's call): a read, open to every role";

const row = (
  method: Permission["method"],
  pattern: string,
  sdk: string | undefined,
  roles: readonly ApiUserRole[],
  ours?: string,
): Permission => ({ method, pattern, sdk, roles, ...(ours ? { ours } : {}) });

const T = "transactions-api.ts#";
const V = "vaults-api.ts#";
const A = "blockchains-assets-api.ts#";
const W2 = "webhooks-v2-api.ts#";
const IW = "internal-wallets-api.ts#";
const TX = "/v1/transactions";
const VA = "/v1/vault/accounts/:id/:assetId";
const WH = "/v1/webhooks/:webhookId";
const N = `${WH}/notifications`;

/** The permission table: one row per platform route the emulator serves. */
export const PERMISSIONS: readonly Permission[] = [
  row("POST", TX, `${T}createTransaction`, WRITERS, WRITE),
  row("GET", TX, `${T}getTransactions`, ALL),
  row("POST", `${TX}/estimate_fee`, `${T}estimateTransactionFee`, FEE_ESTIMATORS),
  row("GET", "/v1/estimate_network_fee", `${T}estimateNetworkFee`, WRITERS),
  row("GET", `${TX}/:id`, `${T}getTransaction`, ALL),
  row("GET", `${TX}/external_tx_id/:externalTxId`, `${T}getTransactionByExternalId`, ALL),
  row("POST", `${TX}/:id/cancel`, `${T}cancelTransaction`, WRITERS),
  row("GET", "/v1/vault/accounts_paged", `${V}getPagedVaultAccounts`, ALL),
  row("GET", "/v1/vault/accounts/:id", `${V}getVaultAccount`, ALL),
  row("GET", VA, `${V}getVaultAccountAsset`, ALL),
  row("GET", `${VA}/addresses_paginated`, `${V}getVaultAccountAssetAddressesPaginated`, ALL),
  row("GET", `${VA}/addresses`, undefined, ALL, OLD),
  row("GET", "/v1/blockchains", `${A}listBlockchains`, ALL, READ),
  row("GET", "/v1/blockchains/:id", `${A}getBlockchain`, ALL, READ),
  row("GET", "/v1/assets", `${A}listAssets`, ALL, READ),
  row("GET", "/v1/assets/:id", `${A}getAsset`, ALL, READ),
  row("GET", "/v1/supported_assets", `${A}getSupportedAssets`, WRITERS),
  row("GET", "/v1/external_wallets", "external-wallets-api.ts#getExternalWallets", ALL),
  row("GET", "/v1/external_wallets/:walletId", "external-wallets-api.ts#getExternalWallet", ALL),
  row("GET", "/v1/internal_wallets", `${IW}getInternalWallets`, ALL, READ),
  row("GET", "/v1/internal_wallets/:walletId", `${IW}getInternalWallet`, ALL, READ),
  row("GET", "/v1/contracts", "contracts-api.ts#getContracts", ALL),
  row("GET", "/v1/contracts/:walletId", "contracts-api.ts#getContract", WRITERS),
  row("GET", "/v1/webhooks", `${W2}getWebhooks`, ALL, READ),
  row("POST", "/v1/webhooks", `${W2}createWebhook`, WEBHOOK_ADMINS),
  row("GET", WH, `${W2}getWebhook`, ALL, READ),
  row("PATCH", WH, `${W2}updateWebhook`, WEBHOOK_ADMINS),
  row("DELETE", WH, `${W2}deleteWebhook`, WEBHOOK_ADMINS),
  row("GET", `${WH}/metrics/:metricName`, `${W2}getMetrics`, ALL, READ),
  row("GET", N, `${W2}getNotifications`, ALL, READ),
  row("POST", `${N}/resend_by_resource`, `${W2}resendNotificationsByResourceId`, WEBHOOK_RESENDERS),
  row("POST", `${N}/resend_failed`, `${W2}resendFailedNotifications`, WEBHOOK_RESENDERS),
  row("GET", `${N}/resend_failed/jobs/:jobId`, `${W2}getResendJobStatus`, ALL, READ),
  row("POST", `${N}/resend_by_query`, `${W2}resendNotificationsByQuery`, WEBHOOK_RESENDERS),
  row("GET", `${N}/resend_by_query/jobs/:jobId`, `${W2}getResendByQueryJobStatus`, ALL, READ),
  row("GET", `${N}/:notificationId`, `${W2}getNotification`, ALL, READ),
  row("POST", `${N}/:notificationId/resend`, `${W2}resendNotificationById`, WEBHOOK_RESENDERS),
  row("GET", `${N}/:notificationId/attempts`, `${W2}getNotificationAttempts`, ALL, READ),
  row("POST", "/v1/webhooks/resend", "webhooks-api.ts#resendWebhooks", WRITERS),
  row("POST", "/v1/webhooks/resend/:txId", "webhooks-api.ts#resendTransactionWebhooks", WRITERS),
];

const BY_ROUTE = new Map(PERMISSIONS.map((p) => [`${p.method} ${p.pattern}`, p]));

/** The row of a route, or `undefined` when the table has none. */
export function permissionOf(method: string, pattern: string): Permission | undefined {
  return BY_ROUTE.get(`${method} ${pattern}`);
}

/**
 * Why `user` may not call the route of `permission`, or `undefined` when it
 * may: one sentence (under the 300 characters a client shows of a platform
 * message) naming the user, its role, the call, the roles that may, and what
 * the role may do.
 *
 * @example
 * ```ts
 * const p = permissionOf("POST", "/v1/transactions")!;
 * refusal(p, { name: "ci", role: "VIEWER" }); // "API user ci (VIEWER) may not call POST /v1/transactions ..."
 * refusal(p, { name: "ops", role: "SIGNER" }); // undefined
 * ```
 */
export function refusal(
  permission: Permission,
  user: { name: string; role: ApiUserRole },
): string | undefined {
  if (permission.roles.includes(user.role)) return undefined;
  const op = permission.sdk ? ` (${permission.sdk.split("#")[1]})` : "";
  const roles = permission.roles;
  const allowed = roles.length === 1
    ? roles[0]
    : `${roles.slice(0, -1).join(", ")} or ${roles.at(-1)}`;
  return `API user ${user.name} is a ${user.role} and may not call ${permission.method} ${permission.pattern}${op}: it needs ${allowed}. A ${user.role} may ${
    ROLE_SUMMARY[user.role]
  }.`;
}
