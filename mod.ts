/**
 * `service` as a library: the CLI entry (`run`), the platform API client and
 * its typed operations. The executable is `main.ts`.
 *
 * @example
 * ```ts
 * import { loadCredentials, PlatformClient, listWebhooks } from "./mod.ts";
 * const client = new PlatformClient(await loadCredentials({ apiKey: "...", privateKey: "./api.pem" }));
 * for await (const hook of listWebhooks(client)) console.log(hook.id, hook.status);
 * ```
 *
 * @module
 */

export { ExitCode, exitCodeFor, run } from "./lib/cli/mod.ts";
export type { CommandContext, Io, Writer } from "./lib/cli/mod.ts";
export * from "./lib/platform/mod.ts";
export { VERSION } from "./lib/version.ts";
