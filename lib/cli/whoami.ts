/**
 * `service whoami`: checks the credentials with one cheap authenticated request (one vault
 * account) and prints which environment answered and where the address and the key came
 * from. Nothing secret is printed, not even part of the key. Refused credentials exit 3.
 *
 * @module
 */

import { connectionFlags, formatFlag, leaf, platformApi } from "./command.ts";
import { platformAddress } from "./platform_address.ts";
import { isLoopbackHost } from "../core/mod.ts";

/** Names an environment by its base URL (`productionUrl`: the build's, `""` when it has none). */
function environmentName(baseUrl: string, productionUrl: string): string {
  if (productionUrl !== "" && baseUrl === productionUrl) return "production";
  const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, "");
  if (/^sandbox[.-]/i.test(host)) return "sandbox";
  if (isLoopbackHost(host)) return "local";
  return "custom";
}

/** `service whoami`. */
export const whoamiCommand = leaf({
  summary: "Check the credentials against the platform and say which environment answered.",
  usage: "[--profile NAME] [connection flags]",
  flags: { ...connectionFlags, ...formatFlag },
  examples: [
    "service whoami --profile sandbox",
    "service whoami --apiBaseUrl http://127.0.0.1:8080",
  ],
  async run({ flags: f, origins }, ctx) {
    const { client, api } = await platformApi(f, ctx);
    const address = platformAddress(f.apiBaseUrl, origins);
    for await (const _ of api.listVaultAccounts(client, { limit: 1, signal: ctx.signal })) break;
    const production = api.buildApiBaseUrl();
    await ctx.out.object({
      ok: true,
      environment: environmentName(
        client.baseUrl,
        production === "" ? "" : api.normalizeBaseUrl(production),
      ),
      apiBaseUrl: client.baseUrl,
      // where the address the key went to came from: a flag, a variable, a profile, the build
      apiBaseUrlFrom: address.from,
      // no profile in use: no `profile` field (rather than `"profile": ""`)
      ...(ctx.loaded?.profile ? { profile: ctx.loaded.profile } : {}),
      apiKeyFrom: origins.get("apiKey") ?? "--apiKey",
    });
    return 0;
  },
});
