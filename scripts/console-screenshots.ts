import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { openConsole, signIn, startConsoleSetup } from "../test/browser/harness.ts";

/**
 * Screenshots of the web console for docs/console/ (run by hand: `node scripts/console-screenshots.ts`; the
 * README links them). Same setup as the browser tests (test/browser/harness.ts): the `npm start` bundle, a mock
 * OpenAI upstream, Debian's chromium. It makes a few requests so the pages have something to show, then
 * visits each page of SHOTS. Add a page: one entry (its hash route and what to wait for).
 */

const OUT_DIR = join(import.meta.dirname, "..", "docs", "console");

interface Shot {
  file: string;
  /** Reaches the page and waits until it shows its data. */
  open(page: Page): Promise<void>;
}

const SHOTS: Shot[] = [
  {
    file: "logs.png",
    async open(page) {
      await page.goto(`${page.url().split("#")[0]}#/logs`);
      await page.getByRole("row").filter({ hasText: "gpt-4o" }).first().waitFor();
    },
  },
  {
    file: "request.png",
    async open(page) {
      await page.getByRole("row").filter({ hasText: "gpt-4o-mini" }).first().click();
      await page.getByTestId("log-cost").waitFor();
    },
  },
  {
    file: "trace.png",
    async open(page) {
      await page.goto(`${page.url().split("#")[0]}#/logs`);
      await page.getByRole("link", { name: "screensh" }).first().click();
      await page.getByRole("heading", { name: /^Trace/ }).waitFor();
    },
  },
  {
    file: "analytics.png",
    async open(page) {
      await page.getByRole("link", { name: "Analytics" }).click();
      await page.locator("figure.chart canvas").nth(7).waitFor();
    },
  },
  {
    file: "keys.png",
    async open(page) {
      await page.goto(`${page.url().split("#")[0]}#/keys`);
      await page.getByRole("row").filter({ hasText: "ci-deploy" }).waitFor();
    },
  },
  {
    file: "configs.png",
    async open(page) {
      await page.goto(`${page.url().split("#")[0]}#/configs/new`);
      await page.getByLabel("Name", { exact: true }).fill("fallback to anthropic");
      await page
        .getByLabel("Config (JSON)")
        .fill(
          JSON.stringify({ strategy: { mode: "loadbalance" }, targets: [{ provider: "openai", weight: -1 }] }, null, 2),
        );
      await page.getByRole("button", { name: "Create config" }).click();
      await page.getByTestId("error-param").waitFor();
    },
  },
];

const setup = await startConsoleSetup();
try {
  // Some traffic: two models, a trace of three spans, and one failed request.
  const trace = `screenshot-${Date.now()}`;
  for (const [model, span, parent] of [
    ["gpt-4o-mini", "root", undefined],
    ["gpt-4o", "plan", "root"],
    ["gpt-4o-mini", "answer", "root"],
    ["gpt-4o-mini", undefined, undefined],
  ] as const) {
    await setup.openai.chat.completions.create(
      { model, messages: [{ role: "user", content: `Summarise the ${span ?? "weekly"} report in one line.` }] },
      {
        headers: span
          ? {
              "x-gateway-trace-id": trace,
              "x-gateway-span-id": span,
              "x-gateway-span-name": span,
              ...(parent ? { "x-gateway-parent-span-id": parent } : {}),
            }
          : {},
      },
    );
  }
  setup.upstream.setFault({ status: 429, times: 1 });
  await setup.openai.chat.completions
    .create({ model: "gpt-4o", messages: [{ role: "user", content: "Hi" }] })
    .catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  // A key for the API keys page (the bootstrap key is there already).
  await fetch(`${setup.gateway.url}/v1/api-keys/organisation/service`, {
    method: "POST",
    headers: { "x-gateway-api-key": setup.gateway.adminKey, "content-type": "application/json" },
    body: JSON.stringify({ name: "ci-deploy", scopes: ["configs.read", "configs.list", "logs.list"] }),
  });

  mkdirSync(OUT_DIR, { recursive: true });
  const { context, page } = await openConsole(setup, { width: 1280, height: 900 });
  await signIn(page, setup.gateway.adminKey);
  for (const shot of SHOTS) {
    await shot.open(page);
    await page.screenshot({ path: join(OUT_DIR, shot.file), fullPage: true });
    console.log(`wrote docs/console/${shot.file}`);
  }
  await context.close();
} finally {
  await setup.close();
}
