import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { userStore } from "../../core/control/users/store.ts";
import { type TestGateway, apiCaller, startTestGateway } from "../helpers/gateway.ts";
import { type OidcProvider, startOidcProvider } from "../helpers/oidc-provider.ts";

/**
 * OIDC single sign-on end to end: the real local gateway, a test OpenID provider over HTTP, and a browser
 * played by fetch with `redirect: "manual"` and a hand-kept cookie jar.
 */

let gateway: TestGateway;
let idp: OidcProvider;
let organisationId: string;
const SECRET = "web-client-secret-0123456789";
const CLI_SECRET = "cli-client-secret-9876543210";

const api = apiCaller(() => gateway);
const records = () => gateway.gateway.services.stores.records;

const baseSettings = () => ({
  issuer: idp.issuer,
  client_id: "gateway-web",
  client_secret: SECRET,
  token_endpoint_auth_method: "client_secret_basic",
  allowed_domains: ["example.com"],
  additional_clients: [
    {
      sso_client_id: "cli",
      client_id: "gateway-cli",
      client_secret: CLI_SECRET,
      token_endpoint_auth_method: "client_secret_post",
    },
  ],
});

beforeAll(async () => {
  idp = await startOidcProvider();
  idp.clients.set("gateway-web", { secret: SECRET });
  idp.clients.set("gateway-cli", { secret: CLI_SECRET });
  gateway = await startTestGateway();
  organisationId = gateway.gateway.bootstrap.organisationId;
  await userStore(records()).create(organisationId, {
    slug: "alice@example.com",
    email: "alice@example.com",
    name: "Alice Admin",
    role: "admin",
  });
  const put = await api("PUT", "/v1/admin/organisation/sso", baseSettings());
  expect(put.status, JSON.stringify(put.body)).toBe(200);
});

afterAll(async () => {
  await gateway?.close();
  await idp?.close();
});

interface Browser {
  cookies: Map<string, string>;
  header(): string;
}

const newBrowser = (): Browser => {
  const cookies = new Map<string, string>();
  return { cookies, header: () => [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") };
};

function keepCookies(browser: Browser, response: Response) {
  for (const cookie of response.headers.getSetCookie()) {
    const [pair] = cookie.split(";");
    const eq = pair!.indexOf("=");
    const value = pair!.slice(eq + 1);
    if (value) browser.cookies.set(pair!.slice(0, eq), value);
    else browser.cookies.delete(pair!.slice(0, eq));
  }
}

/** Login -> IdP authorise -> callback, following each redirect by hand. */
async function signIn(query: Record<string, string> = {}, browser = newBrowser()) {
  const params = new URLSearchParams({ organisation: organisationId, ...query });
  const login = await fetch(`${gateway.url}/v1/auth/sso/login?${params}`, { redirect: "manual" });
  if (login.status !== 302) return { login, browser, callback: undefined as Response | undefined, callbackUrl: "" };
  const authorize = new URL(login.headers.get("location")!);
  const atIdp = await fetch(authorize, { redirect: "manual" });
  expect(atIdp.status).toBe(302);
  const callbackUrl = atIdp.headers.get("location")!;
  const callback = await fetch(callbackUrl, { redirect: "manual" });
  keepCookies(browser, callback);
  return { login, authorize, browser, callback, callbackUrl };
}

const withSession = (
  browser: Browser,
  method: string,
  path: string,
  init: { body?: unknown; headers?: Record<string, string> } = {},
) =>
  fetch(`${gateway.url}${path}`, {
    method,
    headers: {
      cookie: browser.header(),
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });

describe("SSO settings", () => {
  it("stores the client secret sealed, shows only a mask, audits, and keeps it when the mask is sent back", async () => {
    const shown = await api("GET", "/v1/admin/organisation/sso");
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      object: "sso_settings",
      configured: true,
      issuer: idp.issuer,
      client_id: "gateway-web",
      token_endpoint_auth_method: "client_secret_basic",
      allowed_domains: ["example.com"],
      additional_clients: [{ sso_client_id: "cli", client_id: "gateway-cli" }],
    });
    expect(shown.body.client_secret).toContain("*");
    expect(JSON.stringify(shown.body)).not.toContain(SECRET);
    expect(JSON.stringify(shown.body)).not.toContain(CLI_SECRET);
    // Stored sealed, not in plaintext.
    const stored = await records().get(`ORG#${organisationId}`, "SSO");
    expect(JSON.stringify(stored)).not.toContain(SECRET);

    const again = await api("PUT", "/v1/admin/organisation/sso", {
      ...shown.body,
      object: undefined,
      configured: undefined,
      updated_at: undefined,
      jwks: undefined,
      additional_clients: shown.body.additional_clients.map((client: any) => ({ ...client, jwks: undefined })),
    });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    // The kept secret still works: a login exchanges its code with it.
    const { callback } = await signIn();
    expect(callback!.status).toBe(302);

    const audit = await api("GET", "/v1/audit-logs?resource_type=sso_settings&limit=100");
    expect(audit.body.data.length).toBeGreaterThanOrEqual(2);
    expect(audit.body.data[0]).toMatchObject({ resource_type: "sso_settings", resource_id: organisationId });
    expect(JSON.stringify(audit.body)).not.toContain(SECRET);
  });

  it("answers 400 naming the param for bad bodies and SSRF issuers", async () => {
    const bad = async (body: unknown, param: string) => {
      const response = await api("PUT", "/v1/admin/organisation/sso", body);
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.param).toBe(param);
    };
    await bad({ ...baseSettings(), token_endpoint_auth_method: "none" }, "token_endpoint_auth_method");
    await bad({ ...baseSettings(), issuer: "http://169.254.169.254/latest" }, "issuer");
    await bad({ ...baseSettings(), issuer: "http://10.0.0.5/" }, "issuer");
    await bad({ ...baseSettings(), allowed_domains: ["not a domain"] }, "allowed_domains[0]");
    await bad({ ...baseSettings(), client_id: "new-client", client_secret: undefined }, "client_secret");
    await bad({ ...baseSettings(), token_endpoint_auth_method: "private_key_jwt" }, "jwks");
    expect((await api("PUT", "/v1/admin/organisation/sso", { ...baseSettings(), surprise: 1 })).status).toBe(400);
  });

  it("is admin-only and per organisation", async () => {
    const workspaceKey = await createApiKey(records(), {
      organisationId,
      workspaceId: gateway.gateway.bootstrap.defaultWorkspaceId,
      name: "ws",
      keyType: "workspace",
      keySubType: "service",
      scopes: ["sso_settings.read", "sso_settings.update"],
    });
    expect((await api("GET", "/v1/admin/organisation/sso", undefined, workspaceKey.secret)).status).toBe(403);
    const otherOrgKey = await createApiKey(records(), {
      organisationId: "org_other",
      name: "other",
      keyType: "organisation",
      keySubType: "service",
      scopes: ["*"],
      organisationRole: "owner",
    });
    const other = await api("GET", "/v1/admin/organisation/sso", undefined, otherOrgKey.secret);
    expect(other.status).toBe(200);
    expect(other.body).toEqual({ object: "sso_settings", enabled: false, configured: false });
    const login = await fetch(`${gateway.url}/v1/auth/sso/login?organisation=org_other`, { redirect: "manual" });
    expect(login.status).toBe(404);
  });
});

describe("SSO login and sessions", () => {
  it("signs in with PKCE, state and nonce; the session cookie authenticates control-plane calls", async () => {
    idp.nextUser = { email: "Alice@Example.com", email_verified: true, name: "Alice" };
    const { login, authorize, callback, browser } = await signIn({ redirect: "/console/home?tab=1" });
    expect(login.status).toBe(302);
    expect(authorize!.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize!.searchParams.get("code_challenge")).toMatch(/^[\w-]{43}$/);
    expect(authorize!.searchParams.get("state")).toBeTruthy();
    expect(authorize!.searchParams.get("nonce")).toBeTruthy();
    expect(authorize!.searchParams.get("redirect_uri")).toBe(`${gateway.url}/v1/auth/sso/callback`);
    expect(callback!.status).toBe(302);
    expect(callback!.headers.get("location")).toBe("/console/home?tab=1");
    const sessionCookie = callback!.headers.getSetCookie().find((cookie) => cookie.startsWith("gateway_session="))!;
    expect(sessionCookie).toMatch(/; HttpOnly; Secure; SameSite=Lax; Path=\//);
    expect(idp.tokenAuth.at(-1)).toBe("client_secret_basic");

    const self = await withSession(browser, "GET", "/v1/auth/self");
    expect(self.status).toBe(200);
    const me = await self.json();
    expect(me).toMatchObject({
      email: "alice@example.com",
      display_name: "Alice Admin",
      organisation_id: organisationId,
      role: "admin",
      auth_method: "session",
    });
    expect(me.csrf_token).toBe(browser.cookies.get("gateway_csrf"));

    const workspaces = await withSession(browser, "GET", "/v1/admin/workspaces");
    expect(workspaces.status).toBe(200);
    expect((await workspaces.json()).data.length).toBeGreaterThanOrEqual(1);

    // The session's calls are logged like any authenticated call.
    await expect
      .poll(
        async () => {
          const logs = await api("GET", "/v1/logs?limit=100");
          return JSON.stringify(logs.body);
        },
        { timeout: 5000 },
      )
      .toContain("/v1/admin/workspaces");
    const logs = JSON.stringify((await api("GET", "/v1/logs?limit=100")).body);
    expect(logs).not.toContain(browser.cookies.get("gateway_session")!);
  });

  it("refuses state-changing session calls without the CSRF header or the gateway's Origin", async () => {
    const { browser } = await signIn();
    const path = "/v1/admin/organisation/settings";
    const body = { user_api_key_auto_create: false };
    const refused = await withSession(browser, "PUT", path, { body });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.code).toBe("csrf_failed");
    const wrongToken = await withSession(browser, "PUT", path, { body, headers: { "x-gateway-csrf": "nope" } });
    expect(wrongToken.status).toBe(403);
    const foreign = await withSession(browser, "PUT", path, { body, headers: { origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    const withToken = await withSession(browser, "PUT", path, {
      body,
      headers: { "x-gateway-csrf": browser.cookies.get("gateway_csrf")! },
    });
    expect(withToken.status).toBe(200);
    const sameOrigin = await withSession(browser, "PUT", path, { body, headers: { origin: gateway.url } });
    expect(sameOrigin.status).toBe(200);
  });

  it("accepts a callback once: a replay is refused", async () => {
    const { callback, callbackUrl } = await signIn();
    expect(callback!.status).toBe(302);
    const replay = await fetch(callbackUrl, { redirect: "manual" });
    expect(replay.status).toBe(401);
    expect((await replay.json()).error.code).toBe("sso_state_invalid");
    expect(replay.headers.getSetCookie()).toEqual([]);
  });

  it("refuses ID tokens with a wrong nonce, audience, issuer or expiry", async () => {
    for (const overrides of [
      { nonce: "someone-elses-nonce" },
      { aud: "another-client" },
      { iss: "https://idp.example" },
      { exp: Math.floor(Date.now() / 1000) - 600 },
    ]) {
      idp.nextIdTokenOverrides = overrides;
      const { callback } = await signIn();
      expect(callback!.status, JSON.stringify(overrides)).toBe(401);
      const body = await callback!.json();
      expect(body.error.code).toBe("sso_failed");
      expect(callback!.headers.getSetCookie()).toEqual([]);
    }
  });

  it("provisions verified users of allowed domains only, and none when auto-provisioning is off", async () => {
    idp.nextUser = { email: "bob@example.com", email_verified: true, name: "Bob" };
    const bob = await signIn();
    expect(bob.callback!.status).toBe(302);
    const me = await (await withSession(bob.browser, "GET", "/v1/auth/self")).json();
    expect(me).toMatchObject({ email: "bob@example.com", role: "member", display_name: "Bob" });
    // A member's session holds no admin rights.
    expect((await withSession(bob.browser, "GET", "/v1/admin/workspaces")).status).toBe(403);
    const audit = await api("GET", `/v1/audit-logs?resource_id=${me.id}`);
    expect(audit.body.data[0]).toMatchObject({ action: "create", resource_type: "user" });

    idp.nextUser = { email: "carol@other.org", email_verified: true };
    const carol = await signIn();
    expect(carol.callback!.status).toBe(403);
    expect((await carol.callback!.json()).error.code).toBe("sso_user_not_allowed");

    idp.nextUser = { email: "dave@example.com", email_verified: false };
    const dave = await signIn();
    expect(dave.callback!.status).toBe(403);
    expect((await dave.callback!.json()).error.code).toBe("sso_email_unverified");

    const off = await api("PUT", "/v1/admin/organisation/sso", {
      ...baseSettings(),
      disable_auto_provision_user: true,
    });
    expect(off.status).toBe(200);
    idp.nextUser = { email: "erin@example.com", email_verified: true };
    const erin = await signIn();
    expect(erin.callback!.status).toBe(403);
    idp.nextUser = { email: "bob@example.com", email_verified: true };
    expect((await signIn()).callback!.status).toBe(302);
    await api("PUT", "/v1/admin/organisation/sso", baseSettings());
    idp.nextUser = { email: "alice@example.com", email_verified: true };
  });

  it("selects an additional client by sso_client_id", async () => {
    const { authorize, callback } = await signIn({ sso_client_id: "cli" });
    expect(authorize!.searchParams.get("client_id")).toBe("gateway-cli");
    expect(callback!.status).toBe(302);
    expect(idp.tokenAuth.at(-1)).toBe("client_secret_post");
    const unknown = await signIn({ sso_client_id: "nope" });
    expect(unknown.login.status).toBe(404);
  });

  it("authenticates the client with private_key_jwt and shows only the public keys", async () => {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const privateJwk = { ...(await exportJWK(privateKey)), kid: "gw-1", alg: "ES256" };
    const publicJwk = { ...(await exportJWK(publicKey)), kid: "gw-1", alg: "ES256" };
    idp.clients.set("gateway-pkjwt", { jwks: { keys: [publicJwk] } });
    const put = await api("PUT", "/v1/admin/organisation/sso", {
      ...baseSettings(),
      client_id: "gateway-pkjwt",
      client_secret: undefined,
      token_endpoint_auth_method: "private_key_jwt",
      jwks: { keys: [privateJwk] },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.jwks).toEqual({ keys: [publicJwk] });
    expect(JSON.stringify(put.body)).not.toContain(privateJwk.d!);
    expect(JSON.stringify((await api("GET", "/v1/admin/organisation/sso")).body)).not.toContain(privateJwk.d!);
    const { callback } = await signIn();
    expect(callback!.status).toBe(302);
    expect(idp.tokenAuth.at(-1)).toBe("private_key_jwt");
    const audit = await api("GET", "/v1/audit-logs?resource_type=sso_settings&limit=1");
    expect(JSON.stringify(audit.body)).not.toContain(privateJwk.d!);
    await api("PUT", "/v1/admin/organisation/sso", baseSettings());
  });

  it("only redirects to relative paths", async () => {
    for (const redirect of ["https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)"]) {
      const login = await fetch(
        `${gateway.url}/v1/auth/sso/login?${new URLSearchParams({ organisation: organisationId, redirect })}`,
        { redirect: "manual" },
      );
      expect(login.status, redirect).toBe(400);
      expect((await login.json()).error.param).toBe("redirect");
    }
  });

  it("logs out: the session no longer authenticates", async () => {
    const { browser } = await signIn();
    expect((await withSession(browser, "GET", "/v1/auth/self")).status).toBe(200);
    const sessionId = browser.cookies.get("gateway_session")!;
    expect((await withSession(browser, "POST", "/v1/auth/logout")).status).toBe(403);
    const out = await withSession(browser, "POST", "/v1/auth/logout", {
      headers: { "x-gateway-csrf": browser.cookies.get("gateway_csrf")! },
    });
    expect(out.status).toBe(200);
    keepCookies(browser, out);
    expect(browser.cookies.has("gateway_session")).toBe(false);
    const after = await fetch(`${gateway.url}/v1/auth/self`, { headers: { cookie: `gateway_session=${sessionId}` } });
    expect(after.status).toBe(401);
  });
});
