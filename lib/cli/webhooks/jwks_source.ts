/**
 * Where `service webhooks verify` and `listen` get the keys that signed a
 * delivery: `--jwks URL|FILE`, else the JWKS next to the API the user points
 * at (`<origin of --apiBaseUrl>/.well-known/jwks.json`: the emulator serves
 * its own there), else the production platform's
 * (`https://keys.service.io/.well-known/jwks.json`).
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import type { Jwks, JwksResolver } from "../../webhooks/signature.ts";

/** The production platform's JWKS (vendor host written neutrally, see README "Names"). */
export const PRODUCTION_JWKS_URL = "https://keys.service.io/.well-known/jwks.json";

/** A key set and where it came from (for messages). */
export interface JwksSource {
  /** The keys: a document read from a file, or a URL fetched lazily. */
  keys: Jwks | JwksResolver;
  /** The URL or file it came from. */
  where: string;
}

/**
 * Resolves `--jwks` (a URL or a file) or the default from `apiBaseUrl`.
 * A file that cannot be read or is not a JWKS is a usage error (exit 2).
 */
export async function jwksSource(
  jwks: string | undefined,
  apiBaseUrl: string | undefined,
): Promise<JwksSource> {
  const { asJwks, RemoteJwks } = await import("../../webhooks/remote_jwks.ts");
  let url: string;
  if (jwks !== undefined && jwks !== "") {
    if (/^https?:\/\//i.test(jwks)) url = jwks;
    else {
      let text: string;
      try {
        text = await Deno.readTextFile(jwks);
      } catch (e) {
        throw new UsageError(
          `Cannot read --jwks ${JSON.stringify(jwks)}: ${
            (e as Error).name === "NotFound" ? "no such file" : (e as Error).message
          }. Give a JWKS file or an http(s) URL.`,
        );
      }
      try {
        return { keys: asJwks(JSON.parse(text), jwks), where: jwks };
      } catch {
        throw new UsageError(
          `--jwks ${JSON.stringify(jwks)} is not a JWKS document ({"keys":[...]}).`,
        );
      }
    }
  } else if (apiBaseUrl) {
    let origin: string;
    try {
      origin = new URL(apiBaseUrl).origin;
    } catch {
      throw new UsageError(`Invalid value for --apiBaseUrl: not a URL.`);
    }
    url = `${origin}/.well-known/jwks.json`;
  } else url = PRODUCTION_JWKS_URL;
  return { keys: new RemoteJwks(url), where: url };
}
