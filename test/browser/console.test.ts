import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleSetup, browserSkipReason, openConsole, signIn, startConsoleSetup } from "./harness.ts";

const skipReason = browserSkipReason();

/**
 * The console in a real browser (issue 29): sign in with an API key, find a request made through the openai SDK
 * in the logs, open it and see its cost, and see that cost again in the analytics summary.
 */
describe.skipIf(skipReason !== undefined)("web console in chromium", () => {
  let setup: ConsoleSetup;

  beforeAll(async () => {
    setup = await startConsoleSetup();
  }, 120_000);

  afterAll(async () => {
    await setup?.close();
  });

  it("serves the console at / with a strict policy and no cache on index.html", async () => {
    const response = await fetch(`${setup.gateway.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await response.text();
    const asset = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const script = await fetch(`${setup.gateway.url}/${asset}`);
    expect(script.headers.get("cache-control")).toContain("immutable");
    expect(script.headers.get("content-type")).toContain("javascript");
    expect((await fetch(`${setup.gateway.url}/assets/..%2f..%2fpackage.json`)).status).toBe(404);
  });

  it("rejects a wrong key and shows the gateway's error", async () => {
    const { context, page } = await openConsole(setup);
    try {
      await page.getByLabel("API key", { exact: true }).fill("gk-not-a-key");
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect.poll(() => page.getByRole("alert").first().textContent()).toBeTruthy();
      expect(await page.getByRole("button", { name: "Sign out" }).count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it("signs in with an API key, finds an openai SDK request in the logs, opens it, and sees its cost in analytics", async () => {
    const answer = await setup.openai.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hello from the browser test" }],
      metadata: undefined,
    });
    expect(answer.choices[0]?.message.content).toBeTruthy();

    const { context, page, problems } = await openConsole(setup);
    try {
      await signIn(page, setup.gateway.adminKey);
      // The key lives in this tab's sessionStorage only: never localStorage, never the URL.
      expect(await page.evaluate(() => localStorage.length)).toBe(0);
      expect(await page.evaluate(() => Object.values(sessionStorage))).toContain(setup.gateway.adminKey);
      expect(page.url()).not.toContain(setup.gateway.adminKey);

      await page.getByRole("link", { name: "Logs", exact: true }).click();
      const row = page.getByRole("row").filter({ hasText: "gpt-4o-mini" }).first();
      // The log is written just after the answer: refresh until it is listed.
      await expect
        .poll(
          async () => {
            if ((await row.count()) > 0) return true;
            await page.getByRole("button", { name: "Refresh" }).click();
            return false;
          },
          { timeout: 20_000, interval: 500 },
        )
        .toBe(true);
      await row.click();
      await page.getByRole("heading", { name: /^Request log/ }).waitFor();
      const cost = (await page.getByTestId("log-cost").textContent())!.trim();
      expect(cost).toMatch(/^\$\d+\.\d+$/);
      expect(Number(cost.slice(1))).toBeGreaterThan(0);
      expect(await page.getByText("Hello from the browser test").count()).toBeGreaterThan(0);

      await page.getByRole("link", { name: "Analytics" }).click();
      const tile = page.locator('[data-tile="Cost"]');
      await tile.waitFor();
      await expect.poll(async () => (await tile.textContent())?.trim(), { timeout: 10_000 }).toBe(cost);
      expect((await page.locator('[data-tile="Requests"]').textContent())?.trim()).not.toBe("0");
      // uPlot drew its charts (canvas), allowed by the policy.
      await expect
        .poll(() => page.locator("figure.chart canvas").count(), { timeout: 10_000 })
        .toBeGreaterThanOrEqual(8);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("at 390 px wide the nav folds under a Menu button that opens it", async () => {
    const { context, page, problems } = await openConsole(setup, { width: 390, height: 844 });
    try {
      await signIn(page, setup.gateway.adminKey);
      // Hidden elements have no role for getByRole: find the folded nav by its id.
      const nav = page.locator("nav#nav");
      const menu = page.getByRole("button", { name: "Menu" });
      expect(await menu.isVisible()).toBe(true);
      expect(await nav.isVisible()).toBe(false);
      await menu.click();
      expect(await nav.isVisible()).toBe(true);
      await nav.getByRole("link", { name: "Analytics" }).click();
      await page.getByRole("heading", { name: "Analytics" }).waitFor();
      // No sideways scrolling of the page itself.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
