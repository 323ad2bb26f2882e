import { createHash, randomBytes } from "node:crypto";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { browserSkipReason, launchBrowser } from "./harness.ts";

const skipReason = browserSkipReason();

/**
 * The OAuth pages of the gateway's authorization server (core/mcp/oauth/pages.ts) in a real browser: what
 * chromium sends with the pages' own form posts (Origin, Sec-Fetch-Site) must pass the same-origin check of
 * sign-in and consent (core/mcp/oauth/page-forms.ts), and Allow must reach the client's redirect URI with a code.
 */
describe.skipIf(skipReason !== undefined)("OAuth sign-in and consent pages in chromium", () => {
  let gateway: TestGateway;
  let browser: Browser;
  let callback: Server;
  let redirectUri: string;
  const arrived: URL[] = [];

  beforeAll(async () => {
    [gateway, browser] = await Promise.all([startTestGateway(), launchBrowser()]);
    callback = createServer((request, response) => {
      arrived.push(new URL(request.url ?? "/", "http://client.invalid"));
      response.end("back at the client");
    });
    await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve));
    redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    callback?.close();
  });

  it("signs in with an API key and allows: the browser's form posts pass, and the client gets its code", async () => {
    const registered = await fetch(`${gateway.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "Browser client",
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: "none",
      }),
    });
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const verifier = randomBytes(32).toString("base64url");
    const query = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
      state: "browser-state",
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    const posts: Array<{ url: string; headers: Record<string, string> }> = [];
    page.on("request", async (request) => {
      if (request.method() === "POST") posts.push({ url: request.url(), headers: await request.allHeaders() });
    });

    await page.goto(`${gateway.url}/oauth/authorize?${query}`);
    await page.getByLabel("Gateway API key").fill(gateway.adminKey);
    await page.getByRole("button", { name: "Sign in with an API key" }).click();
    await page.getByRole("button", { name: "Allow" }).waitFor();
    await page.getByRole("button", { name: "Allow" }).click();
    const callbackOf = () => arrived.find((url) => url.pathname === "/callback");
    await expect.poll(callbackOf, { timeout: 10_000 }).toBeDefined();

    const back = callbackOf()!;
    expect(back.searchParams.get("state")).toBe("browser-state");
    expect(back.searchParams.get("code")).toMatch(/^gwoac_/);
    // What chromium sent with the pages' forms: the gateway's own origin (not `null`), and same-origin.
    expect(posts.map((post) => new URL(post.url).pathname)).toEqual([
      "/oauth/authorize/sign-in",
      "/oauth/authorize/consent",
    ]);
    for (const post of posts) {
      expect(post.headers.origin).toBe(gateway.url);
      expect(post.headers["sec-fetch-site"]).toBe("same-origin");
    }
    const token = await fetch(`${gateway.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        client_id: clientId,
        code: back.searchParams.get("code")!,
        code_verifier: verifier,
        redirect_uri: redirectUri,
      }),
    });
    expect(token.status).toBe(200);
    await context.close();
  });
});
