/**
 * A local npm registry for the package test: it serves the packument and
 * tarball of the Deno runtime package for this machine (`@deno/linux-x64-glibc`
 * at the version package-lock.json pins), and 404 for everything else, so
 * `npm install -g service-cli-*.tgz` resolves the package's optional
 * dependencies exactly as it does against registry.npmjs.org, without the
 * network.
 *
 * Why a registry and not `npm install --offline`: `npm ci` (which filled the
 * npm cache on this machine and in CI) fetches tarballs by the lock's
 * integrity but never the packuments, and npm cannot resolve a dependency
 * offline without its packument. The tarball served is the registry's own,
 * read from the npm cache by the lock's integrity (checked again here), or,
 * where the cache lacks it, `npm pack` of the installed package.
 *
 * This stands in for the npm registry only; npm, the package and the Deno
 * runtime are the real ones.
 *
 * @module
 */

import { ROOT } from "../support/tools.ts";
import { fromBase64, toHex as hex } from "../../lib/core/mod.ts";

/** A running local registry. */
export interface LocalRegistry {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  /** Package names npm asked for, in order. */
  requested: string[];
  close(): Promise<void>;
}

/** The npm cache directory npm itself uses (asked before HOME is changed). */
async function npmCacheDir(): Promise<string> {
  const out = await new Deno.Command("npm", { args: ["config", "get", "cache"], stderr: "null" })
    .output();
  return new TextDecoder().decode(out.stdout).trim();
}

/** The registry tarball of `name` (as locked in package-lock.json), and its integrity. */
export async function lockedTarball(
  name: string,
  workDir: string,
): Promise<
  {
    version: string;
    integrity: string;
    bytes: Uint8Array<ArrayBuffer>;
    manifest: Record<string, unknown>;
  }
> {
  const lock = JSON.parse(await Deno.readTextFile(`${ROOT}package-lock.json`));
  const entry = lock.packages[`node_modules/${name}`];
  const manifest = JSON.parse(await Deno.readTextFile(`${ROOT}node_modules/${name}/package.json`));
  const [algo, b64] = entry.integrity.split("-");
  const digest = fromBase64(b64);
  const cached = `${await npmCacheDir()}/_cacache/content-v2/${algo}/${hex(digest).slice(0, 2)}/${
    hex(digest).slice(2, 4)
  }/${hex(digest).slice(4)}`;
  let bytes: Uint8Array<ArrayBuffer>;
  let integrity = entry.integrity as string;
  try {
    bytes = await Deno.readFile(cached);
    const sum = new Uint8Array(await crypto.subtle.digest("SHA-512", bytes));
    if (algo !== "sha512" || hex(sum) !== hex(digest)) throw new Error("integrity mismatch");
  } catch {
    // not in the cache: pack the installed copy (same files, another tarball)
    const out = await new Deno.Command("npm", {
      args: ["pack", "--json", "--pack-destination", workDir, `${ROOT}node_modules/${name}`],
      stdout: "piped",
      stderr: "null",
    }).output();
    const [info] = JSON.parse(new TextDecoder().decode(out.stdout));
    bytes = await Deno.readFile(`${workDir}/${info.filename}`);
    integrity = info.integrity;
  }
  return { version: entry.version, integrity, bytes, manifest };
}

/** Serves `packages` (name -> locked tarball) on a free loopback port. */
export async function startLocalRegistry(names: string[], workDir: string): Promise<LocalRegistry> {
  const served = new Map<string, Awaited<ReturnType<typeof lockedTarball>>>();
  for (const n of names) served.set(n, await lockedTarball(n, workDir));
  const requested: string[] = [];
  let url = "";
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname.slice(1));
    const tar = /^(.+)\/-\/[^/]+\.tgz$/.exec(path);
    if (tar) {
      const p = served.get(tar[1]);
      return p
        ? new Response(p.bytes.slice(), { headers: { "content-type": "application/octet-stream" } })
        : new Response("not found", { status: 404 });
    }
    requested.push(path);
    const p = served.get(path);
    if (!p) return Response.json({ error: "not found" }, { status: 404 });
    const file = `${path.split("/").pop()}-${p.version}.tgz`;
    const { name, version, os, cpu, libc, bin } = p.manifest as Record<string, unknown>;
    return Response.json({
      name,
      "dist-tags": { latest: version },
      versions: {
        [p.version]: {
          name,
          version,
          os,
          cpu,
          libc,
          bin,
          dist: { tarball: `${url}${path}/-/${file}`, integrity: p.integrity },
        },
      },
    });
  });
  url = `http://127.0.0.1:${server.addr.port}/`;
  return { url, requested, close: () => server.shutdown() };
}
