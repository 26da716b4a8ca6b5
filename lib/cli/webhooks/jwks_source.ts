/**
 * Where `service webhooks verify` and `listen` get the keys that signed a delivery:
 * `--jwks URL|FILE`, else the JWKS next to the API the user points at (the emulator serves its
 * own there), else the production JWKS the build carries. A build without one never assumes a
 * key set: with neither flag, a usage error (exit 2) says what to give.
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { connectionFlags } from "../command.ts";
import type { Jwks, JwksResolver } from "../../webhooks/signature.ts";
import { buildApiBaseUrl, buildJwksUrl } from "../../platform/production.ts";

/** With neither `--jwks` nor `--apiBaseUrl` in a build without a production JWKS (exit 2). */
export const NO_JWKS: string =
  "No keys to check signatures against: give --jwks URL|FILE (the platform's JWKS), or " +
  "--apiBaseUrl of the platform that signs (the emulator serves its own); this build carries " +
  "no production JWKS address.";

/** `--jwks` and `--apiBaseUrl`: where {@linkcode jwksSource} takes the keys from. */
export const jwksFlags = {
  jwks: { type: "string", placeholder: "URL|FILE", description: "The JWKS: a URL or a file." },
  apiBaseUrl: {
    ...connectionFlags.apiBaseUrl,
    description: "Without --jwks: check signatures against this API's /.well-known/jwks.json.",
  },
} as const;

/** A key set and where it came from (for messages). */
export interface JwksSource {
  /** The keys: a document read from a file, or a URL fetched lazily. */
  keys: Jwks | JwksResolver;
  /** The URL or file it came from. */
  where: string;
}

/**
 * Resolves `--jwks` (a URL or a file) or the default from `apiBaseUrl`, else the build's.
 * A file that cannot be read or is not a JWKS, or no source at all, is a usage error (exit 2).
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
      const text = await Deno.readTextFile(jwks).catch((e) => {
        throw new UsageError(
          `Cannot read --jwks ${JSON.stringify(jwks)}: ${
            e.name === "NotFound" ? "no such file" : e.message
          }. Give a JWKS file or an http(s) URL.`,
        );
      });
      try {
        return { keys: asJwks(JSON.parse(text), jwks), where: jwks };
      } catch {
        throw new UsageError(
          `--jwks ${JSON.stringify(jwks)} is not a JWKS document ({"keys":[...]}).`,
        );
      }
    }
  } else if (apiBaseUrl) {
    const origin = URL.parse(apiBaseUrl)?.origin;
    if (origin === undefined) throw new UsageError(`Invalid value for --apiBaseUrl: not a URL.`);
    const production = buildApiBaseUrl();
    url = production !== "" && buildJwksUrl() !== "" && new URL(production).origin === origin
      ? buildJwksUrl()
      : `${origin}/.well-known/jwks.json`;
  } else if (buildJwksUrl() !== "") url = buildJwksUrl();
  else throw new UsageError(NO_JWKS);
  return { keys: new RemoteJwks(url), where: url };
}
