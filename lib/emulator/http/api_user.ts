/**
 * The emulator's API users, all of one workspace: the default user (an
 * ADMIN named `default`) and those asked for with `--apiUser ROLE[:NAME]`.
 * Each has an id, a name, a role (`permissions.ts`), an API key (UUID) and
 * its own RSA 2048 key pair made with WebCrypto. The private keys are
 * written as PKCS#8 PEM (mode 0600) in a private directory (mode 0700): the
 * default user's to `api.pem`, another's to `api-<name>.pem`; the public key
 * verifies request tokens. With a state file the same users are loaded
 * again on restart, so clients keep working: a user is found again by its
 * name (its role is the one given now); users stored but not asked for on
 * this run are kept in the state, unused, so that asking for them again
 * brings back the same keys.
 *
 * Why the private key is kept in the database: the README promises that a
 * restart with the same `--state` keeps the same API user (same key, same
 * PEM), so the key must be stored somewhere, and the state file is a secret
 * anyway: it already holds the API key and the webhook signing key, and
 * anyone who can read it can act as the API user without the PEM (the
 * emulator's admin endpoint takes the API key alone). Moving the PEM to a
 * second file would add a second secret to guard without making the first
 * one public. So the whole state is private instead: the database and its
 * WAL and shared-memory files are 0600 (see `../store.ts`), the key
 * directory 0700 and `api.pem` 0600, whatever the umask.
 *
 * @module
 */

import { RsaVerifier } from "../../core/rsa.ts";
import { fromBase64, toBase64 } from "../../core/mod.ts";
import { EmulatorConfigError } from "../errors.ts";
import { makePrivate, type Store } from "../store.ts";
import { API_USER_ROLES, type ApiUserRole } from "./permissions.ts";

/** One API user of a running emulator, as the ready line shows it. */
export interface RunningApiUser {
  /** Its name (`default` for the default user). */
  name: string;
  /** Its role. */
  role: ApiUserRole;
  /** Its API key (a UUID; never logged). */
  apiKey: string;
  /** Its private key file (0600). */
  privateKeyPath: string;
  /** The same key as PKCS#8 PEM text (never logged). */
  privateKeyPem: string;
}

/** One API user the emulator accepts. */
export interface ApiUser extends RunningApiUser {
  /** The user's id (a UUID; the `createdBy` of the transactions it creates). */
  id: string;
  /** Verifies RS256 request tokens (the shared verifier, `lib/core/rsa.ts`). */
  publicKey: RsaVerifier;
}

/** An API user asked for: `--apiUser ROLE[:NAME]`. */
export interface ApiUserSpec {
  /** The role. */
  role: ApiUserRole;
  /** The name; default: the role in lower case (`non-signing-admin`), `-2`, `-3`... when taken. */
  name?: string;
}

interface Stored {
  id?: string;
  name?: string;
  role?: ApiUserRole;
  apiKey: string;
  privateKeyPem: string;
  publicKeySpki: string;
}

/** The default user's name. */
export const DEFAULT_USER_NAME = "default";
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * Reads `ROLE[:NAME]` (the role in any case); throws
 * {@linkcode EmulatorConfigError} naming what is wrong.
 *
 * @example
 * ```ts
 * parseApiUserSpec("viewer:dashboard"); // { role: "VIEWER", name: "dashboard" }
 * parseApiUserSpec("SIGNER"); // { role: "SIGNER" }
 * ```
 */
export function parseApiUserSpec(text: string): ApiUserSpec {
  const i = text.indexOf(":");
  const role = (i < 0 ? text : text.slice(0, i)).trim().toUpperCase().replaceAll("-", "_");
  if (!(API_USER_ROLES as readonly string[]).includes(role)) {
    throw new EmulatorConfigError(
      `Invalid --apiUser ${JSON.stringify(text)}: the role must be one of ${
        API_USER_ROLES.join(", ")
      } (ROLE or ROLE:NAME).`,
    );
  }
  if (i < 0) return { role: role as ApiUserRole };
  const name = text.slice(i + 1);
  if (!NAME.test(name) || name === DEFAULT_USER_NAME) {
    throw new EmulatorConfigError(
      `Invalid --apiUser ${
        JSON.stringify(text)
      }: the name must be 1 to 64 letters, digits, "-" or "_" (not "${DEFAULT_USER_NAME}").`,
    );
  }
  return { role: role as ApiUserRole, name };
}

const b64 = (bytes: ArrayBuffer) => toBase64(new Uint8Array(bytes));

const ALGO = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;

async function generate(): Promise<Stored> {
  const pair = await crypto.subtle.generateKey(
    { ...ALGO, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
    true,
    ["sign", "verify"],
  ) as CryptoKeyPair;
  const pkcs8 = b64(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const spki = b64(await crypto.subtle.exportKey("spki", pair.publicKey));
  const lines = pkcs8.match(/.{1,64}/g) ?? [];
  const pem = `-----BEGIN PRIVATE KEY-----\n${lines.join("\n")}\n-----END PRIVATE KEY-----\n`;
  const [id, apiKey] = [crypto.randomUUID(), crypto.randomUUID()];
  return { id, apiKey, privateKeyPem: pem, publicKeySpki: spki };
}

/** The names of `specs`, defaults filled in and each unique. */
function namesOf(specs: readonly ApiUserSpec[]): string[] {
  const taken = new Set<string>([DEFAULT_USER_NAME]);
  for (const s of specs) {
    if (s.name === undefined) continue;
    if (taken.has(s.name)) {
      throw new EmulatorConfigError(
        `--apiUser: the name ${JSON.stringify(s.name)} is given twice.`,
      );
    }
    taken.add(s.name);
  }
  return specs.map((s) => {
    if (s.name !== undefined) return s.name;
    const base = s.role.toLowerCase().replaceAll("_", "-");
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
    taken.add(name);
    return name;
  });
}

async function materialize(
  stored: Stored & { id: string; name: string; role: ApiUserRole },
  path: string,
): Promise<ApiUser> {
  // private before the key is written into it (an existing file may have had another mode)
  makePrivate(path);
  await Deno.writeTextFile(path, stored.privateKeyPem);
  return {
    id: stored.id,
    name: stored.name,
    role: stored.role,
    apiKey: stored.apiKey,
    publicKey: await RsaVerifier.fromSpki(fromBase64(stored.publicKeySpki), "RS256"),
    privateKeyPem: stored.privateKeyPem,
    privateKeyPath: path,
  };
}

/**
 * Loads the API users from the store, or creates and stores new ones, and
 * writes their private keys to `dir` (0600; `dir` is created 0700): the
 * default user first (`api.pem`), then one per spec (`api-<name>.pem`), in
 * the order given.
 *
 * @example
 * ```ts
 * import { Store } from "../store.ts";
 * const store = Store.open();
 * const [admin, viewer] = await ensureApiUsers(store, await Deno.makeTempDir(), [{ role: "VIEWER" }]);
 * ```
 */
export async function ensureApiUsers(
  store: Store,
  dir: string,
  specs: readonly ApiUserSpec[] = [],
): Promise<ApiUser[]> {
  const names = namesOf(specs);
  // the default user: stored under "api_user" since the first version (an id is added once)
  const existing = store.getMeta("api_user");
  const first: Stored = existing ? JSON.parse(existing) as Stored : await generate();
  if (!first.id) first.id = crypto.randomUUID();
  store.setMeta("api_user", JSON.stringify(first));
  // the others, by name
  const others = JSON.parse(store.getMeta("api_users") ?? "[]") as Stored[];
  const users: (Stored & { id: string; name: string; role: ApiUserRole })[] = [
    { ...first, id: first.id, name: DEFAULT_USER_NAME, role: "ADMIN" },
  ];
  for (let i = 0; i < specs.length; i++) {
    let s = others.find((o) => o.name === names[i]);
    if (!s) {
      s = { ...await generate(), name: names[i] };
      others.push(s);
    }
    s.role = specs[i].role;
    users.push({ ...s, id: s.id!, name: names[i], role: specs[i].role });
  }
  store.setMeta("api_users", JSON.stringify(others));
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  if (Deno.build.os !== "windows") await Deno.chmod(dir, 0o700);
  const base = dir.replace(/\/+$/, "");
  const out: ApiUser[] = [];
  for (const u of users) {
    const file = u.name === DEFAULT_USER_NAME ? "api.pem" : `api-${u.name}.pem`;
    out.push(await materialize(u, `${base}/${file}`));
  }
  return out;
}
