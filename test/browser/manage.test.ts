import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleSetup, browserSkipReason, openConsole, signIn, startConsoleSetup } from "./harness.ts";

/**
 * The Manage pages in a real browser (Debian's chromium driven by playwright-core, test/browser/harness.ts)
 * against the `npm start` bundle serving the built console: an API key is created with scopes and its secret is
 * shown once, then revoked (and refused by the API); an invalid config shows the 400's message and path, a valid
 * one is saved; credentials stay write-only; the prompt playground renders; a 403 is said plainly.
 */

const skipReason = browserSkipReason();
let setup: ConsoleSetup;
let context: BrowserContext;
let page: Page;
let problems: string[];

/** The gateway's JSON API with a key (the admin key by default): status and parsed body. */
async function api(method: string, path: string, body?: unknown, key = setup.gateway.adminKey) {
  const response = await fetch(`${setup.gateway.url}${path}`, {
    method,
    headers: { "x-gateway-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe.skipIf(skipReason !== undefined)("console Manage pages", () => {
  beforeAll(async () => {
    setup = await startConsoleSetup();
    ({ context, page, problems } = await openConsole(setup));
    page.setDefaultTimeout(10_000);
    await signIn(page, setup.gateway.adminKey);
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await setup?.close();
  });

  it("creates an API key with scopes, shows its secret once, and revokes it (then the API refuses it)", async () => {
    await page.goto(`${setup.gateway.url}/#/keys`);
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.getByRole("button", { name: "Create key" }).click();
    const dialog = page.getByRole("dialog", { name: "Create API key" });
    await dialog.getByLabel("Name", { exact: true }).fill("browser key");
    await dialog.locator('input[value="logs.list"]').check();
    await dialog.locator('input[value="configs.list"]').check();
    await dialog.getByRole("button", { name: "Create key" }).click();

    const shown = page.getByRole("dialog", { name: 'Key "browser key" created' });
    await shown.getByText("This is the only time it is shown.").waitFor();
    const secret = await shown.getByTestId("secret-value").inputValue();
    expect(secret.length).toBeGreaterThan(20);
    // The key works, with the scopes picked.
    expect((await api("GET", "/v1/configs", undefined, secret)).status).toBe(200);
    expect((await api("GET", "/v1/api-keys", undefined, secret)).status).toBe(403);
    await shown.getByRole("button", { name: "Close" }).click();

    // Once closed, the secret is nowhere in the page: the table shows only the masked hint.
    const row = page.getByRole("row").filter({ hasText: "browser key" });
    await row.waitFor();
    expect(await page.content()).not.toContain(secret);

    await row.getByRole("button", { name: "Revoke key browser key" }).click();
    await page.getByRole("dialog", { name: "Revoke key" }).getByRole("button", { name: "Revoke" }).click();
    await row.waitFor({ state: "detached" });
    expect((await api("GET", "/v1/configs", undefined, secret)).status).toBe(401);
    const listed = await api("GET", "/v1/api-keys");
    expect(listed.body.data.find((key: { name: string }) => key.name === "browser key").status).toBe("revoked");
  });

  it("shows an invalid config's error with its param path, then saves a valid config", async () => {
    await page.goto(`${setup.gateway.url}/#/configs/new`);
    await page.getByRole("heading", { name: "New config" }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill("browser config");
    const editor = page.getByLabel("Config (JSON)");
    await editor.fill(
      JSON.stringify({ strategy: { mode: "loadbalance" }, targets: [{ provider: "openai", weight: -1 }] }, null, 2),
    );
    await page.getByRole("button", { name: "Create config" }).click();
    await expect.poll(() => page.getByTestId("error-param").textContent()).toBe("config.targets[0].weight");
    expect(await page.getByRole("alert").first().textContent()).toContain("weight");
    expect((await api("GET", "/v1/configs")).body.data).toHaveLength(0);

    await editor.fill(JSON.stringify({ strategy: { mode: "fallback" }, targets: [{ provider: "openai" }] }, null, 2));
    await page.getByRole("button", { name: "Create config" }).click();
    await page.getByRole("heading", { name: "Config browser config" }).waitFor();
    const saved = (await api("GET", "/v1/configs")).body.data;
    expect(saved.map((config: { name: string }) => config.name)).toEqual(["browser config"]);
    expect(page.url()).toContain(`#/configs/${saved[0].id}`);
    await page.getByRole("link", { name: "Version 1" }).waitFor();
  });

  it("opens every Manage page for an admin without an error, at phone width too", async () => {
    const pages: Array<[string, string]> = [
      ["/keys", "API keys"],
      ["/configs", "Configs"],
      ["/workspaces", "Workspaces"],
      ["/users", "Users"],
      ["/integrations", "Integrations"],
      ["/virtual-keys", "Virtual keys"],
      ["/policies", "Policies"],
      ["/policies?kind=rate-limits", "Policies"],
      ["/guardrails", "Guardrails"],
      ["/prompts", "Prompts"],
      ["/audit-logs", "Audit logs"],
    ];
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      for (const [route, title] of pages) {
        await page.goto(`${setup.gateway.url}/#${route}`);
        await page.getByRole("heading", { name: title, exact: true }).waitFor();
        await page.waitForLoadState("networkidle");
        expect(await page.getByRole("alert").count(), route).toBe(0);
        // Nothing wider than the screen: tables scroll inside their own box.
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow, `${route} at ${width}px`).toBeLessThanOrEqual(0);
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(problems).toEqual([]);
  });

  it("shows a 403 as a clear 'not allowed' message for a key without the scope", async () => {
    const limited = await api("POST", "/v1/api-keys/organisation/service", {
      name: "logs only",
      scopes: ["logs.list"],
    });
    const other = await openConsole(setup);
    other.page.setDefaultTimeout(10_000);
    await signIn(other.page, limited.body.key);
    await other.page.goto(`${setup.gateway.url}/#/keys`);
    const alert = other.page.getByRole("alert").filter({ hasText: "Not allowed (403)" });
    await alert.waitFor();
    expect(await alert.textContent()).toContain("api_keys.list");
    await other.context.close();
  });

  it("keeps integration credentials write-only: the masked hint is shown, a blank field keeps the stored key", async () => {
    const secretKey = "sk-browser-test-0123456789abcdef";
    await page.goto(`${setup.gateway.url}/#/integrations`);
    await page.getByRole("button", { name: "Add integration" }).click();
    const dialog = page.getByRole("dialog", { name: "Add integration" });
    await dialog.getByLabel("Name", { exact: true }).fill("OpenAI prod");
    await dialog.getByLabel("Slug", { exact: true }).fill("openai-prod");
    await dialog.getByLabel("Provider", { exact: true }).fill("openai");
    await dialog.getByLabel("API key", { exact: true }).fill(secretKey);
    await dialog.getByRole("button", { name: "Create" }).click();
    const row = page.getByRole("row").filter({ hasText: "OpenAI prod" });
    await row.waitFor();
    const stored = (await api("GET", "/v1/integrations/openai-prod")).body;
    expect(stored.masked_api_key).not.toContain(secretKey);
    expect(await row.textContent()).toContain(stored.masked_api_key);
    expect(await page.content()).not.toContain(secretKey);

    await row.getByRole("button", { name: "Edit OpenAI prod" }).click();
    const edit = page.getByRole("dialog", { name: "Edit OpenAI prod" });
    const keyField = edit.getByLabel("API key", { exact: true });
    expect(await keyField.inputValue()).toBe("");
    expect(await keyField.getAttribute("placeholder")).toBe(stored.masked_api_key);
    await edit.getByLabel("Name", { exact: true }).fill("OpenAI production");
    await edit.getByRole("button", { name: "Save" }).click();
    await page.getByRole("row").filter({ hasText: "OpenAI production" }).waitFor();
    const after = (await api("GET", "/v1/integrations/openai-prod")).body;
    expect(after.name).toBe("OpenAI production");
    expect(after.masked_api_key).toBe(stored.masked_api_key);
  });

  it("renders a prompt version in the playground with the variables its template prints", async () => {
    const workspace = (await api("GET", "/v1/admin/workspaces")).body.data[0];
    const created = await api("POST", "/v1/prompts", {
      name: "Tutor",
      workspace_id: workspace.id,
      model: "gpt-4o-mini",
      string: JSON.stringify([
        { role: "system", content: "You are a {{tone}} tutor." },
        { role: "user", content: "Explain {{topic}}" },
      ]),
    });
    expect(created.status).toBe(201);
    await page.goto(`${setup.gateway.url}/#/prompts/${created.body.id}`);
    await page.getByRole("heading", { name: "Playground" }).waitFor();
    await page.getByLabel("Variable tone").fill("patient");
    await page.getByLabel("Variable topic").fill("tides");
    await page.getByRole("button", { name: "Render" }).click();
    const output = page.getByTestId("playground-output");
    await output.waitFor();
    const rendered = JSON.parse((await output.textContent()) ?? "{}");
    expect(rendered.data.messages).toEqual([
      { role: "system", content: "You are a patient tutor." },
      { role: "user", content: "Explain tides" },
    ]);

    // A variable left out: the gateway's 400 is shown, naming it.
    await page.getByLabel("Variable topic").fill("");
    await page.getByLabel("Variable tone").fill("");
    await page.getByRole("button", { name: "Render" }).click();
    const refusal = page.getByRole("alert").filter({ hasText: "missing_variable" });
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/tone|topic/);
  });
});
