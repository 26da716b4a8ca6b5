/**
 * The emulator's one permission table (`lib/emulator/http/permissions.ts`)
 * against the official TypeScript SDK (`@fireblocks/ts-sdk` in
 * node_modules, unchanged): for every row naming an SDK operation, the
 * SDK's own source is read (its axios parameter creators), and the
 * operation's method and path must be the row's, and its "Endpoint
 * Permission: ..." note, when it has one, must list exactly the row's roles
 * (the workspace Owner and NCW Admin are not API user roles); a row without
 * a note must say why it is the project's choice. And every platform route
 * the emulator serves has exactly one row.
 */

import assert from "node:assert/strict";
import {
  API_USER_ROLES,
  type ApiUserRole,
  PERMISSIONS,
  refusal,
} from "../../lib/emulator/http/permissions.ts";
import { ROUTE_MODULES } from "../../lib/emulator/http/routes.ts";

const SDK_API = new URL("../../node_modules/@fireblocks/ts-sdk/api/", import.meta.url);

interface SdkOperation {
  method: string;
  /** `/transactions/{txId}`. */
  path: string;
  /** The note's text, `undefined` without one. */
  note?: string;
}

const ROLE_WORDS: Record<string, ApiUserRole | null> = {
  "admin": "ADMIN",
  "non-signing admin": "NON_SIGNING_ADMIN",
  "signer": "SIGNER",
  "approver": "APPROVER",
  "editor": "EDITOR",
  "viewer": "VIEWER",
  "owner": null,
  "ncw admin": null,
};

/** The operations of one SDK api file, read from its axios parameter creator. */
function sdkOperations(file: string): Map<string, SdkOperation> {
  const text = Deno.readTextFileSync(new URL(file, SDK_API));
  const creator = text.split("AxiosParamCreator = function")[1].split("\n};")[0];
  const ops = new Map<string, SdkOperation>();
  const re =
    /\/\*\*([\s\S]*?)\*\/\s*\n\s*(\w+): async \([\s\S]*?localVarPath = `([^`]*)`[\s\S]*?method: '(\w+)'/g;
  for (const m of creator.matchAll(re)) {
    const note = m[1].match(/Endpoint Permissions?:?\**:?\s*([^\n]*?)\.?\s*(?:\n|$)/);
    ops.set(m[2], { method: m[4], path: m[3], note: note?.[1] });
  }
  return ops;
}

/** The API user roles a note lists (throws on a word it does not know). */
function rolesOf(note: string): ApiUserRole[] {
  const roles: ApiUserRole[] = [];
  for (const raw of note.split(",")) {
    const word = raw.trim().replace(/^and\s+/, "").replace(/\s+/g, " ").toLowerCase();
    assert.ok(word in ROLE_WORDS, `unknown role ${JSON.stringify(word)} in ${note}`);
    const role = ROLE_WORDS[word];
    if (role) roles.push(role);
  }
  return roles;
}

const files = new Map<string, Map<string, SdkOperation>>();
function sdkOperation(ref: string): SdkOperation | undefined {
  const [file, op] = ref.split("#");
  if (!files.has(file)) files.set(file, sdkOperations(file));
  return files.get(file)!.get(op);
}

Deno.test("the reader of SDK notes reads them (a known note, a call without one)", () => {
  const create = sdkOperation("webhooks-v2-api.ts#createWebhook")!;
  assert.equal(create.method, "POST");
  assert.equal(create.path, "/webhooks");
  assert.deepEqual(rolesOf(create.note!), ["ADMIN", "NON_SIGNING_ADMIN"]);
  assert.deepEqual(rolesOf(sdkOperation("vaults-api.ts#getVaultAccountAsset")!.note!).length, 6);
  assert.equal(sdkOperation("transactions-api.ts#createTransaction")?.note, undefined);
});

Deno.test("every row naming an SDK operation is the SDK's note, or says why it is ours", () => {
  const problems: string[] = [];
  let fromSdk = 0;
  for (const p of PERMISSIONS) {
    const where = `${p.method} ${p.pattern}`;
    assert.ok(p.roles.every((r) => API_USER_ROLES.includes(r)));
    if (!p.sdk) {
      if (!p.ours) problems.push(`${where}: no SDK operation and no reason`);
      continue;
    }
    const op = sdkOperation(p.sdk);
    if (!op) {
      problems.push(`${where}: the SDK has no ${p.sdk}`);
      continue;
    }
    const sdkPattern = "/v1" + op.path.replace(/\{\w+\}/g, ":");
    if (op.method !== p.method || sdkPattern !== p.pattern.replace(/:\w+/g, ":")) {
      problems.push(`${where}: the SDK's ${p.sdk} is ${op.method} ${op.path}`);
    }
    if (op.note === undefined) {
      if (!p.ours) problems.push(`${where}: the SDK has no note, and the row gives no reason`);
      continue;
    }
    fromSdk++;
    if (p.ours) problems.push(`${where}: marked ours, but the SDK has a note`);
    const want = rolesOf(op.note).sort().join(",");
    if ([...p.roles].sort().join(",") !== want) {
      problems.push(`${where}: the table says ${p.roles.join(",")}, the SDK ${want}`);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(fromSdk >= 20, `${fromSdk} rows checked against a note`);
});

Deno.test("every platform route the emulator serves has one row, and every row a route", () => {
  const served = ROUTE_MODULES.flatMap((m) => m.routes)
    .filter((r) => r.auth === "api")
    .map((r) => `${r.method} ${r.pattern}`).sort();
  const rows = PERMISSIONS.map((p) => `${p.method} ${p.pattern}`).sort();
  assert.deepEqual(rows, served);
  assert.equal(new Set(rows).size, rows.length);
});

Deno.test("a Viewer reads only; writes are refused to it everywhere", () => {
  for (const p of PERMISSIONS) {
    if (p.method !== "GET") assert.ok(!p.roles.includes("VIEWER"), `${p.method} ${p.pattern}`);
  }
});

Deno.test("every refusal names the user, the role, the call and what may, within 300 characters", () => {
  // 300: what the project's platform client keeps of a platform message (lib/platform/client.ts)
  let longest = "";
  for (const p of PERMISSIONS) {
    for (const role of API_USER_ROLES) {
      const why = refusal(p, { name: "deploy-bot-12345", role });
      if (p.roles.includes(role)) {
        assert.equal(why, undefined);
        continue;
      }
      assert.ok(why !== undefined && why.includes(`API user deploy-bot-12345 is a ${role}`), why);
      assert.ok(why.includes(`${p.method} ${p.pattern}`) && why.includes(`A ${role} may `), why);
      if (why.length > longest.length) longest = why;
    }
  }
  assert.ok(longest.length <= 300, `${longest.length}: ${longest}`);
});
