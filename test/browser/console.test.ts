import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOidcProvider } from "../helpers/oidc-provider.ts";
import {
  type ConsoleSetup,
  browserSkipReason,
  openConsole,
  signIn,
  startConsoleSetup,
  unlabelledControls,
} from "./harness.ts";

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
      // The console's own calls (its GET /v1/logs polls) are logged too, tagged, and left out by default.
      expect(await page.getByRole("row").filter({ hasText: "/v1/logs" }).count()).toBe(0);
      await page.getByLabel("Hide the console's own requests").uncheck();
      expect(await page.getByRole("row").filter({ hasText: "/v1/logs" }).count()).toBeGreaterThan(0);
      await page.getByLabel("Hide the console's own requests").check();
      expect(await unlabelledControls(page)).toEqual([]);
      // Keyboard: a row is focusable and Enter opens it.
      await row.focus();
      await page.keyboard.press("Enter");
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
      expect(await unlabelledControls(page)).toEqual([]);
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

  it("filters the logs by status, opens a trace as a tree of spans, and records feedback on it", async () => {
    const trace = `browser-trace-${Date.now()}`;
    const span = (id: string, parent?: string) => ({
      "x-gateway-trace-id": trace,
      "x-gateway-span-id": id,
      "x-gateway-span-name": `step ${id}`,
      ...(parent ? { "x-gateway-parent-span-id": parent } : {}),
    });
    // Feedback is given with a workspace key (organisation keys are refused): sign in and call with one.
    const admin = { "x-gateway-api-key": setup.gateway.adminKey, "content-type": "application/json" };
    const workspaces = await (await fetch(`${setup.gateway.url}/v1/admin/workspaces`, { headers: admin })).json();
    const created = await fetch(`${setup.gateway.url}/v1/api-keys/workspace/service`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({
        name: "console browser test",
        workspace_id: workspaces.data[0].id,
        scopes: ["logs.list", "logs.view", "feedback.create", "analytics.view"],
      }),
    });
    expect(created.status).toBe(201);
    const workspaceKey: string = (await created.json()).key;
    const ask = (headers: Record<string, string>) =>
      setup.openai.chat.completions.create(
        { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] },
        { headers: { "x-gateway-api-key": workspaceKey, ...headers } },
      );
    await ask(span("root"));
    await ask(span("child", "root"));
    setup.upstream.setFault({ status: 429, times: 1 });
    await expect(ask({})).rejects.toThrow();

    const { context, page, problems } = await openConsole(setup);
    try {
      await signIn(page, workspaceKey);
      await page.goto(`${setup.gateway.url}/#/logs`);
      await page.getByLabel("Status", { exact: true }).fill("429");
      await page.getByRole("button", { name: "Apply filters" }).click();
      expect(page.url()).toContain("status=429");
      // Only failures are listed once the filtered page is in: every data row carries the 429 badge.
      const rows = page.locator("tbody tr");
      const failed = rows.filter({ hasText: "429" });
      await expect
        .poll(
          async () => {
            const [all, matching] = [await rows.count(), await failed.count()];
            if (matching > 0 && all === matching) return true;
            await page.getByRole("button", { name: "Refresh" }).click();
            return false;
          },
          { timeout: 20_000, interval: 500 },
        )
        .toBe(true);
      expect(await page.getByRole("row").filter({ hasText: "gpt-4o-mini" }).filter({ hasText: "200" }).count()).toBe(0);

      await page.goto(`${setup.gateway.url}/#/logs/trace/${trace}`);
      const tree = page.getByRole("list", { name: "Spans" });
      await tree.getByRole("link", { name: /step root/ }).waitFor();
      // The child span is nested under its parent.
      expect(
        await tree
          .locator("li li")
          .getByRole("link", { name: /step child/ })
          .count(),
      ).toBe(1);

      const before = await (
        await fetch(`${setup.gateway.url}/v1/analytics/summary`, {
          headers: { "x-gateway-api-key": workspaceKey },
        })
      ).json();
      await page.getByLabel("Value (-10 to 10)").fill("7");
      await page.getByRole("button", { name: "Send feedback" }).click();
      await page.getByRole("status").filter({ hasText: "Feedback 7 recorded" }).waitFor();
      const after = await (
        await fetch(`${setup.gateway.url}/v1/analytics/summary`, {
          headers: { "x-gateway-api-key": workspaceKey },
        })
      ).json();
      expect(after.feedback.total).toBe(before.feedback.total + 1);

      // An out-of-range value: the gateway's 400 is shown with the parameter it names.
      await page.getByLabel("Value (-10 to 10)").fill("11");
      await page.getByRole("button", { name: "Send feedback" }).click();
      await page.getByRole("alert").filter({ hasText: "value" }).waitFor();
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("tails a filtered log list live: a matching request appears without a refresh, others do not", async () => {
    const { context, page, problems } = await openConsole(setup);
    try {
      await signIn(page, setup.gateway.adminKey);
      await page.goto(`${setup.gateway.url}/#/logs?model=tail-model`);
      await page.getByText("No requests match these filters.").waitFor();
      await page.getByLabel("Live tail").check();
      const ask = (model: string) =>
        setup.openai.chat.completions.create({ model, messages: [{ role: "user", content: "tail me" }] });
      await ask("not-the-tail-model");
      await ask("tail-model");
      // The tail reloads the filtered page every 3 s: the row comes without pressing Refresh.
      const row = page.getByRole("row").filter({ hasText: "tail-model" });
      await expect.poll(() => row.count(), { timeout: 15_000, interval: 250 }).toBe(1);
      expect(await page.getByRole("row").filter({ hasText: "not-the-tail-model" }).count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // Last: it turns SSO on for the organisation.
  it("offers SSO once the organisation has it, signs in through the identity provider, and signs out", async () => {
    const { context: before, page: plain } = await openConsole(setup);
    try {
      await plain.getByLabel("API key", { exact: true }).waitFor();
      await plain.waitForLoadState("networkidle"); // the SSO probe has answered
      expect(await plain.getByRole("link", { name: "Sign in with SSO" }).count()).toBe(0);
    } finally {
      await before.close();
    }

    const idp = await startOidcProvider();
    try {
      idp.clients.set("console-web", { secret: "console-web-secret-0123456789" });
      idp.nextUser = { email: "console-user@example.com", email_verified: true, name: "Console User" };
      const settings = await fetch(`${setup.gateway.url}/v1/admin/organisation/sso`, {
        method: "PUT",
        headers: { "x-gateway-api-key": setup.gateway.adminKey, "content-type": "application/json" },
        body: JSON.stringify({
          issuer: idp.issuer,
          client_id: "console-web",
          client_secret: "console-web-secret-0123456789",
          token_endpoint_auth_method: "client_secret_basic",
          allowed_domains: ["example.com"],
        }),
      });
      expect(settings.status, await settings.text()).toBe(200);

      const { context, page, problems } = await openConsole(setup);
      try {
        await page.getByRole("link", { name: "Sign in with SSO" }).click();
        // Gateway -> identity provider -> callback (session cookie) -> the console, which finds the session.
        await page.getByRole("button", { name: "Sign out" }).waitFor();
        expect(await page.locator(".who").textContent()).toBe("Console User");
        expect(await page.evaluate(() => document.cookie)).toContain("gateway_csrf=");
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.getByLabel("API key", { exact: true }).waitFor();
        // The session is over at the gateway too: a reload does not sign back in.
        await page.reload();
        await page.getByLabel("API key", { exact: true }).waitFor();
        expect(await page.getByRole("button", { name: "Sign out" }).count()).toBe(0);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    } finally {
      await idp.close();
    }
  });
});
