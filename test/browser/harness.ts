import { existsSync } from "node:fs";
import OpenAI from "openai";
import { type Browser, type BrowserContext, type Page, chromium } from "playwright-core";
import { type BundleGateway, removeBuiltBundle, startBundleGateway } from "../helpers/bundle-gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Browser tests of the web console: Debian's chromium (CHROMIUM_PATH, else /usr/bin/chromium) driven by
 * playwright-core, against the gateway users run (the `npm start` bundle, test/helpers/bundle-gateway.ts, which
 * builds the console too) with a mock OpenAI upstream. No browser is downloaded: without chromium the tests
 * skip with a visible reason, except under CI, where a missing browser fails.
 */

export function chromiumPath(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"];
  return candidates.find((path): path is string => Boolean(path) && existsSync(path!));
}

/** Why the browser tests cannot run here, or undefined when they can. Throws under CI. */
export function browserSkipReason(): string | undefined {
  if (chromiumPath()) return undefined;
  const reason = "no chromium binary (set CHROMIUM_PATH or apt-get install chromium)";
  if (process.env.CI) throw new Error(`Browser tests need chromium under CI: ${reason}.`);
  console.warn(`Skipping the console's browser tests: ${reason}.`);
  return reason;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"], headless: true });
}

export interface ConsoleSetup {
  gateway: BundleGateway;
  upstream: OpenAIMock;
  browser: Browser;
  /** Chat requests through the `openai` SDK, as a user's application makes them. */
  openai: OpenAI;
  close(): Promise<void>;
}

export async function startConsoleSetup(): Promise<ConsoleSetup> {
  const [gateway, upstream, browser] = await Promise.all([startBundleGateway(), startOpenAIMock(), launchBrowser()]);
  const openai = new OpenAI({
    apiKey: "provider-key",
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: {
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${upstream.url}/v1`,
    },
    maxRetries: 0,
  });
  return {
    gateway,
    upstream,
    browser,
    openai,
    async close() {
      await browser.close();
      await gateway.close();
      await upstream.close();
      await removeBuiltBundle();
    },
  };
}

/** A page of its own (fresh storage) at `width` x `height`; every CSP violation and page error is collected. */
export async function openConsole(
  setup: ConsoleSetup,
  viewport = { width: 1280, height: 900 },
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await setup.browser.newContext({ viewport });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy|Refused to/i.test(message.text()))
      problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  await page.goto(`${setup.gateway.url}/`);
  return { context, page, problems };
}

/** Signs in with an API key through the sign-in form, and waits for the layout. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel("API key", { exact: true }).fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  // The nav may be folded away (phone widths): the Sign out button is always shown.
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}

/** Form controls and buttons of the page with no accessible name (no label, aria-label or text). */
export function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>("input, select, textarea, button")]
      .filter((element) => {
        if ((element as HTMLInputElement).type === "hidden") return false;
        const labels = (element as HTMLInputElement).labels;
        return !(
          (labels && labels.length > 0) ||
          element.getAttribute("aria-label") ||
          element.getAttribute("aria-labelledby") ||
          (element.tagName === "BUTTON" && element.textContent?.trim())
        );
      })
      .map((element) => element.outerHTML.slice(0, 160)),
  );
}
