/**
 * The version of `service`, from deno.json (the release workflow checks the
 * tag against it).
 *
 * @module
 */
import meta from "../deno.json" with { type: "json" };

/** The version string, e.g. `0.1.0`. */
export const VERSION: string = meta.version;
