/**
 * A real browser for the browser tests: Debian's chromium (or the one
 * `CHROMIUM_PATH` names, e.g. google-chrome on CI runners) driven by
 * playwright-core, headless, in a fresh profile that {@linkcode Browser.close}
 * removes.
 *
 * @module
 */

import type { BrowserContext } from "playwright-core";
import { skipWithout } from "./required.ts";

/** The browser's executable. */
export const CHROMIUM: string = Deno.env.get("CHROMIUM_PATH") || "/usr/bin/chromium";

/** True when {@linkcode CHROMIUM} exists. */
export const haveChromium: boolean = await Deno.stat(CHROMIUM).then(() => true, () => false);

/**
 * True to skip a browser test: only on a developer machine without a browser; under .ci/run
 * (SERVICE_REQUIRE_ALL=1) or CI=true a missing browser is a failure.
 */
export const skipBrowser: boolean = skipWithout(haveChromium) && Deno.env.get("CI") !== "true";

/** A launched browser: its context (open pages with `context.newPage()`), and how to end it. */
export interface Browser {
  /** The persistent context of the fresh profile. */
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/** Launches {@linkcode CHROMIUM} headless in a fresh profile (`viewport` if given). */
export async function launchChromium(
  options: { viewport?: { width: number; height: number } } = {},
): Promise<Browser> {
  const profile = await Deno.makeTempDir({ prefix: "chromium-profile-" });
  const removeProfile = () => Deno.remove(profile, { recursive: true }).catch(() => {});
  const { chromium } = await import("playwright-core");
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      ...options,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
  } catch (e) {
    await removeProfile();
    throw e;
  }
  return {
    context,
    close: async () => {
      await context.close();
      await removeProfile();
    },
  };
}
