import { createHash, randomBytes } from "node:crypto";
import {
  type OAuthClientProvider,
  auth,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import type { Principal } from "../../core/auth/principal.ts";
import { HttpError } from "../../core/http/errors.ts";
import { authenticateMcpBearer } from "../../core/mcp/oauth/bearer.ts";
import { type McpServer, mcpIntegrationStore, mcpServerStore } from "../../core/mcp/records.ts";
import { createSession } from "../../core/sso/sessions.ts";
import { seedMember, seedUser, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { codeOf, form, hiddenField, pageForm, signInWithKeyAndAllow } from "../helpers/oauth-browser.ts";
import { startOidcProvider } from "../helpers/oidc-provider.ts";

/**
 * The gateway's OAuth 2.1 server for MCP clients end to end over real HTTP: discovery from a protected-resource
 * metadata URL (as a 401 of the MCP endpoint names it), dynamic registration, the authorize pages played by fetch
 * (manual redirects, forms parsed), PKCE, single-use codes, refresh rotation, introspection with display_name,
 * revocation, and the MCP endpoint's bearer check.
 */

let gateway: TestGateway;
let organisationId: string;
let server: McpServer;
let otherServer: McpServer;
let workspaceKey: string;
let otherWorkspaceKey: string;
let userKey: { id: string; secret: string };
let userId: string;
const REDIRECT = "http://127.0.0.1:45678/callback";

const records = () => gateway.gateway.services.stores.records;
const services = () => gateway.gateway.services;
const resourceOf = (ref: string) => `${gateway.url}/mcp/${ref}`;

async function seedServer(workspaceId: string, slug: string): Promise<McpServer> {
  const integration = await mcpIntegrationStore(records()).create(organisationId, {
    slug: `${slug}-integration`,
    name: `${slug} upstream`,
    url: "http://127.0.0.1:1/mcp",
    transport: "http",
    auth_type: "none",
    configurations: {},
    capabilities: [],
    server_info: {},
    workspaces: [],
    global_workspace_access: true,
  });
  return mcpServerStore(records()).create(organisationId, {
    slug,
    workspaceId,
    name: `Server ${slug}`,
    mcp_integration_id: integration.id,
    capability_overrides: {},
    default_user_access: "allow",
    user_access: [],
  });
}

beforeAll(async () => {
  gateway = await startTestGateway();
  organisationId = gateway.gateway.bootstrap.organisationId;
  const workspaceA = await seedWorkspace(gateway, "OAuth A");
  const workspaceB = await seedWorkspace(gateway, "OAuth B");
  server = await seedServer(workspaceA.id, `docs-${randomBytes(3).toString("hex")}`);
  otherServer = await seedServer(workspaceB.id, `other-${randomBytes(3).toString("hex")}`);
  const user = await seedUser(gateway, "dana@example.com");
  userId = user.id;
  const { userStore } = await import("../../core/control/users.ts");
  await userStore(records()).update(user, { name: "Dana Display" });
  await seedMember(gateway, workspaceA.id, user.id, "member");
  workspaceKey = (
    await createApiKey(records(), {
      organisationId,
      workspaceId: workspaceA.id,
      name: "ws A",
      keyType: "workspace",
      keySubType: "service",
      scopes: ["*"],
    })
  ).secret;
  otherWorkspaceKey = (
    await createApiKey(records(), {
      organisationId,
      workspaceId: workspaceB.id,
      name: "ws B",
      keyType: "workspace",
      keySubType: "service",
      scopes: ["*"],
    })
  ).secret;
  userKey = await createApiKey(records(), {
    organisationId,
    workspaceId: workspaceA.id,
    name: "dana",
    keyType: "workspace",
    keySubType: "user",
    userId: user.id,
    workspaceRole: "member",
    scopes: ["mcp_servers.read"],
  });
});

afterAll(async () => {
  await gateway?.close();
});

const pkce = () => {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
};

async function register(body: Record<string, unknown>) {
  const response = await fetch(`${gateway.url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any, headers: response.headers };
}

async function publicClient(): Promise<string> {
  const answer = await register({
    client_name: "Test MCP client",
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: "none",
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.client_id;
}

function authorizeUrl(clientId: string, challenge: string, extra: Record<string, string> = {}) {
  const params = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "state-123",
    scope: "mcp",
    resource: resourceOf(server.id),
    ...extra,
  });
  return `${gateway.url}/oauth/authorize?${params}`;
}

/** Sign-in page -> API-key form -> consent page -> Allow: the code sent back to the redirect URI. */
async function authorizeWithKey(
  clientId: string,
  challenge: string,
  apiKey: string,
  extra: Record<string, string> = {},
) {
  const page = await fetch(authorizeUrl(clientId, challenge, extra), { redirect: "manual" });
  expect(page.status).toBe(200);
  expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  const signIn = await page.text();
  const signedIn = await fetch(
    `${gateway.url}/oauth/authorize/sign-in`,
    pageForm(gateway.url, {
      request_id: hiddenField(signIn, "request_id")!,
      csrf: hiddenField(signIn, "csrf")!,
      api_key: apiKey,
    }),
  );
  const consent = await signedIn.text();
  expect(signedIn.status, consent).toBe(200);
  expect(consent).toContain("Allow");
  const decided = await fetch(
    `${gateway.url}/oauth/authorize/consent`,
    pageForm(gateway.url, {
      request_id: hiddenField(consent, "request_id")!,
      csrf: hiddenField(consent, "csrf")!,
      decision: "approve",
    }),
  );
  expect(decided.status).toBe(302);
  const location = new URL(decided.headers.get("location")!);
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
  expect(location.searchParams.get("state")).toBe(extra.state ?? "state-123");
  expect(location.searchParams.get("iss")).toBe(gateway.url);
  return location.searchParams.get("code")!;
}

async function token(values: Record<string, string>, headers: Record<string, string> = {}) {
  const init = form(values);
  const response = await fetch(`${gateway.url}/oauth/token`, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), ...headers },
  });
  expect(response.headers.get("cache-control")).toBe("no-store");
  return { status: response.status, body: (await response.json()) as any };
}

const exchange = (clientId: string, code: string, verifier: string) =>
  token({
    grant_type: "authorization_code",
    client_id: clientId,
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
  });

const refreshWith = (clientId: string, refreshToken: string) =>
  token({ grant_type: "refresh_token", client_id: clientId, refresh_token: refreshToken });

async function introspect(tokenValue: string, key = gateway.adminKey) {
  const init = form({ token: tokenValue });
  const response = await fetch(`${gateway.url}/oauth/introspect`, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), "x-gateway-api-key": key },
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function bearer(tokenValue: string, resource = resourceOf(server.id)): Promise<Principal | HttpError> {
  try {
    return await authenticateMcpBearer(tokenValue, services(), resource);
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
}

describe("discovery", () => {
  it("finds the authorization server from the protected-resource metadata URL a 401 names", async () => {
    const metadataUrl = `${gateway.url}/.well-known/oauth-protected-resource/mcp/${server.id}`;
    const resource = await (await fetch(metadataUrl)).json();
    expect(resource).toMatchObject({
      resource: resourceOf(server.id),
      authorization_servers: [gateway.url],
      bearer_methods_supported: ["header"],
      scopes_supported: ["mcp"],
    });
    const metadata = await (
      await fetch(`${resource.authorization_servers[0]}/.well-known/oauth-authorization-server`)
    ).json();
    expect(metadata).toMatchObject({
      issuer: gateway.url,
      authorization_endpoint: `${gateway.url}/oauth/authorize`,
      token_endpoint: `${gateway.url}/oauth/token`,
      registration_endpoint: `${gateway.url}/oauth/register`,
      introspection_endpoint: `${gateway.url}/oauth/introspect`,
      revocation_endpoint: `${gateway.url}/oauth/revoke`,
      code_challenge_methods_supported: ["S256"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
    });
    // The MCP SDK's own discovery reads the same documents.
    const sdkResource = await discoverOAuthProtectedResourceMetadata(resourceOf(server.slug));
    expect(sdkResource.resource).toBe(resourceOf(server.slug));
    const sdkMetadata = await discoverAuthorizationServerMetadata(gateway.url);
    expect(sdkMetadata?.token_endpoint).toBe(`${gateway.url}/oauth/token`);
    expect((await fetch(`${gateway.url}/.well-known/oauth-protected-resource/mcp/nope`)).status).toBe(404);
    expect((await (await fetch(`${gateway.url}/.well-known/oauth-protected-resource`)).json()).resource).toBe(
      gateway.url,
    );
  });
});

describe("dynamic client registration", () => {
  it.each([
    [["http://example.com/cb"]],
    [["https://client.example.com/cb#x"]],
    [["https://*.example.com/cb"]],
    [["/relative"]],
    [[]],
    [undefined],
  ])("refuses redirect_uris %j with invalid_redirect_uri", async (uris) => {
    const answer = await register({ redirect_uris: uris, token_endpoint_auth_method: "none" });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("invalid_redirect_uri");
    expect(answer.body.error_description).toEqual(expect.any(String));
  });

  it("registers public clients without a secret and confidential ones with a secret shown once", async () => {
    const open = await register({ redirect_uris: ["http://localhost:1234/cb"], token_endpoint_auth_method: "none" });
    expect(open.status).toBe(201);
    expect(open.body.client_secret).toBeUndefined();
    expect(open.body.redirect_uris).toEqual(["http://localhost:1234/cb"]);
    const confidential = await register({ redirect_uris: ["https://client.example.com/cb"] });
    expect(confidential.status).toBe(201);
    expect(confidential.body.token_endpoint_auth_method).toBe("client_secret_basic");
    expect(confidential.body.client_secret).toMatch(/^gwocs-/);
    const stored = await records().get(`OAUTHCLIENT#${confidential.body.client_id}`, "OAUTHCLIENT");
    expect(JSON.stringify(stored)).not.toContain(confidential.body.client_secret);
    expect(stored?.ttl).toEqual(expect.any(Number));
    const bad = await register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "private_key_jwt" });
    expect(bad.body.error).toBe("invalid_client_metadata");
  });

  it("caps registrations per hour", async () => {
    const capped = await startTestGateway({ GATEWAY_OAUTH_REGISTRATIONS_PER_HOUR: "2" });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${capped.url}/oauth/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
        });
        statuses.push(response.status);
      }
      expect(statuses).toEqual([201, 201, 429]);
    } finally {
      await capped.close();
    }
  });
});

describe("authorize", () => {
  it("shows errors about the client or its redirect_uri as a page, never redirecting", async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    for (const url of [
      authorizeUrl("gwoc_unknown", challenge),
      authorizeUrl(clientId, challenge, { redirect_uri: "http://127.0.0.1:45678/other" }),
      authorizeUrl(clientId, challenge, { redirect_uri: `${REDIRECT}/` }),
    ]) {
      const response = await fetch(url, { redirect: "manual" });
      expect(response.status).toBe(400);
      expect(response.headers.get("location")).toBeNull();
      expect(response.headers.get("content-type")).toContain("text/html");
    }
  });

  it("sends other errors back to the client with its state", async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const cases: Array<[Record<string, string>, string]> = [
      [{ code_challenge: "" }, "invalid_request"],
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ response_type: "token" }, "unsupported_response_type"],
      [{ resource: "https://elsewhere.example.com/mcp/x" }, "invalid_target"],
      [{ resource: resourceOf("no-such-server") }, "invalid_target"],
      [{ scope: "admin" }, "invalid_scope"],
    ];
    for (const [extra, error] of cases) {
      const response = await fetch(authorizeUrl(clientId, challenge, extra), { redirect: "manual" });
      expect(response.status, JSON.stringify(extra)).toBe(302);
      const location = new URL(response.headers.get("location")!);
      expect(location.searchParams.get("error"), JSON.stringify(extra)).toBe(error);
      expect(location.searchParams.get("state")).toBe("state-123");
    }
  });

  it("refuses a key of another workspace at sign-in, and a forged CSRF token", async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const signIn = await (await fetch(authorizeUrl(clientId, challenge))).text();
    const requestId = hiddenField(signIn, "request_id")!;
    const forged = await fetch(
      `${gateway.url}/oauth/authorize/sign-in`,
      pageForm(gateway.url, { request_id: requestId, csrf: "forged", api_key: workspaceKey }),
    );
    expect(forged.status).toBe(400);
    const refused = await fetch(
      `${gateway.url}/oauth/authorize/sign-in`,
      pageForm(gateway.url, { request_id: requestId, csrf: hiddenField(signIn, "csrf")!, api_key: otherWorkspaceKey }),
    );
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain("cannot reach");
    const otherOrganisation = await createApiKey(records(), {
      organisationId: "org_elsewhere",
      name: "elsewhere",
      keyType: "organisation",
      keySubType: "service",
      scopes: ["*"],
    });
    const signInAgain = await (await fetch(authorizeUrl(clientId, challenge))).text();
    const elsewhere = await fetch(
      `${gateway.url}/oauth/authorize/sign-in`,
      pageForm(gateway.url, {
        request_id: hiddenField(signInAgain, "request_id")!,
        csrf: hiddenField(signInAgain, "csrf")!,
        api_key: otherOrganisation.secret,
      }),
    );
    expect(elsewhere.status).toBe(401);
  });

  it("a signed-in session goes straight to consent, decided only with that session", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const session = await createSession(records(), { organisationId, userId }, 3600);
    const cookie = `gateway_session=${session.id}`;
    const page = await fetch(authorizeUrl(clientId, challenge), { headers: { cookie } });
    const consent = await page.text();
    expect(consent).toContain("dana@example.com");
    const fields = { request_id: hiddenField(consent, "request_id")!, csrf: hiddenField(consent, "csrf")! };
    const withoutCookie = await fetch(
      `${gateway.url}/oauth/authorize/consent`,
      pageForm(gateway.url, { ...fields, decision: "approve" }),
    );
    expect(withoutCookie.status).toBe(403);
    const crossSite = await fetch(`${gateway.url}/oauth/authorize/consent`, {
      ...pageForm(gateway.url, { ...fields, decision: "approve" }, { cookie, origin: "https://evil.example.com" }),
    });
    expect(crossSite.status).toBe(403);
    // Not a form of the gateway's page: without Origin (or `Origin: null`), only Sec-Fetch-Site: same-origin passes.
    const refusedHeaders: Array<Record<string, string>> = [
      { "content-type": "application/x-www-form-urlencoded", cookie },
      { "content-type": "application/x-www-form-urlencoded", cookie, origin: "null" },
      { "content-type": "application/x-www-form-urlencoded", cookie, "sec-fetch-site": "cross-site" },
    ];
    for (const headers of refusedHeaders) {
      const noOrigin = await fetch(`${gateway.url}/oauth/authorize/consent`, {
        ...form({ ...fields, decision: "approve" }),
        headers,
      });
      expect(noOrigin.status, JSON.stringify(headers)).toBe(403);
    }
    const approved = await fetch(`${gateway.url}/oauth/authorize/consent`, {
      ...pageForm(gateway.url, { ...fields, decision: "approve" }, { cookie }),
    });
    expect(approved.status).toBe(302);
    const code = new URL(approved.headers.get("location")!).searchParams.get("code")!;
    const tokens = await exchange(clientId, code, verifier);
    expect(tokens.status).toBe(200);
    const principal = await bearer(tokens.body.access_token);
    expect(principal).toMatchObject({ kind: "oauth", userId, workspaceId: server.workspaceId, organisationId });
    // A decided request cannot be decided again.
    const again = await fetch(`${gateway.url}/oauth/authorize/consent`, {
      ...pageForm(gateway.url, { ...fields, decision: "approve" }, { cookie }),
    });
    expect(again.status).toBe(400);
  });

  it("Deny sends access_denied back", async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const signIn = await (await fetch(authorizeUrl(clientId, challenge))).text();
    const consent = await (
      await fetch(
        `${gateway.url}/oauth/authorize/sign-in`,
        pageForm(gateway.url, {
          request_id: hiddenField(signIn, "request_id")!,
          csrf: hiddenField(signIn, "csrf")!,
          api_key: workspaceKey,
        }),
      )
    ).text();
    const denied = await fetch(
      `${gateway.url}/oauth/authorize/consent`,
      pageForm(gateway.url, {
        request_id: hiddenField(consent, "request_id")!,
        csrf: hiddenField(consent, "csrf")!,
        decision: "deny",
      }),
    );
    expect(new URL(denied.headers.get("location")!).searchParams.get("error")).toBe("access_denied");
  });

  it("bounds the pending requests one client can open (each is kept ten minutes)", async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const statuses: number[] = [];
    for (let i = 0; i < 121; i++) {
      const page = await fetch(authorizeUrl(clientId, challenge), { redirect: "manual" });
      await page.body?.cancel();
      statuses.push(page.status);
    }
    expect(statuses.slice(0, 120).every((status) => status === 200)).toBe(true);
    expect(statuses[120]).toBe(429);
    // Another application is not held back by this one.
    const other = await fetch(authorizeUrl(await publicClient(), challenge), { redirect: "manual" });
    expect(other.status).toBe(200);
  });
});

describe("tokens", () => {
  it("exchanges a code once with PKCE; a replay fails and revokes what the code issued", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const code = await authorizeWithKey(clientId, challenge, workspaceKey);
    const first = await exchange(clientId, code, verifier);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "mcp" });
    expect(first.body.access_token).toMatch(/^gwoat_/);
    expect(first.body.refresh_token).toMatch(/^gwort_/);
    const principal = await bearer(first.body.access_token);
    expect(principal).toMatchObject({ kind: "oauth", organisationId, workspaceId: server.workspaceId });

    const replay = await exchange(clientId, code, verifier);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
    expect(await bearer(first.body.access_token)).toBeInstanceOf(HttpError);
    const refresh = await refreshWith(clientId, first.body.refresh_token);
    expect(refresh.body.error).toBe("invalid_grant");
  });

  it("two concurrent exchanges of one code: one is a replay, and no token of that code stays usable; an expired code fails", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const code = await authorizeWithKey(clientId, challenge, workspaceKey);
    const answers = await Promise.all([exchange(clientId, code, verifier), exchange(clientId, code, verifier)]);
    expect(answers.filter((answer) => answer.status === 200).length).toBeLessThanOrEqual(1);
    expect(answers.some((answer) => answer.body.error === "invalid_grant")).toBe(true);
    // OAuth 2.1 section 4.1.3: the loser's exchange is a replay, which revokes what the winner got (docs/mcp-oauth.md).
    for (const answer of answers) {
      if (answer.status !== 200) continue;
      expect(await bearer(answer.body.access_token)).toBeInstanceOf(HttpError);
      const refresh = await refreshWith(clientId, answer.body.refresh_token);
      expect(refresh.body.error).toBe("invalid_grant");
    }
    const late = await authorizeWithKey(clientId, challenge, workspaceKey);
    const { sha256Hex } = await import("../../core/ids.ts");
    await records().update(`OAUTHCODE#${sha256Hex(late)}`, "OAUTHCODE", {
      set: { expiresAt: Math.floor(Date.now() / 1000) - 1 },
    });
    const expired = await exchange(clientId, late, verifier);
    expect(expired.body.error).toBe("invalid_grant");
    expect(expired.body.error_description).toMatch(/expired/);
  });

  it("refuses a wrong verifier, another redirect_uri, another client, and unknown grants", async () => {
    const clientId = await publicClient();
    const otherClient = await publicClient();
    const { verifier, challenge } = pkce();
    const wrongVerifier = await exchange(
      clientId,
      await authorizeWithKey(clientId, challenge, workspaceKey),
      pkce().verifier,
    );
    expect(wrongVerifier.body.error).toBe("invalid_grant");
    const code = await authorizeWithKey(clientId, challenge, workspaceKey);
    const wrongRedirect = await token({
      grant_type: "authorization_code",
      client_id: clientId,
      code,
      code_verifier: verifier,
      redirect_uri: "http://127.0.0.1:45678/other",
    });
    expect(wrongRedirect.body.error).toBe("invalid_grant");
    const otherCode = await authorizeWithKey(clientId, challenge, workspaceKey);
    expect((await exchange(otherClient, otherCode, verifier)).body.error).toBe("invalid_grant");
    expect((await token({ grant_type: "password", client_id: clientId })).body.error).toBe("unsupported_grant_type");
    expect((await token({ grant_type: "authorization_code", client_id: "gwoc_nope", code: "x" })).status).toBe(401);
    const json = await fetch(`${gateway.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(json.status).toBe(400);
    expect((await json.json()).error).toBe("invalid_request");
  });

  it("rotates refresh tokens; reusing a rotated one revokes the family", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const issued = (await exchange(clientId, await authorizeWithKey(clientId, challenge, workspaceKey), verifier)).body;
    const rotated = await refreshWith(clientId, issued.refresh_token);
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(issued.refresh_token);
    expect((await introspect(issued.refresh_token)).body.active).toBe(false);
    expect((await introspect(rotated.body.refresh_token)).body).toMatchObject({
      active: true,
      token_type: "refresh_token",
    });
    expect(await bearer(rotated.body.access_token)).toMatchObject({ kind: "oauth" });
    const reused = await refreshWith(clientId, issued.refresh_token);
    expect(reused.body.error).toBe("invalid_grant");
    // The whole family ends: the newest tokens too.
    expect(await bearer(rotated.body.access_token)).toBeInstanceOf(HttpError);
    const next = await refreshWith(clientId, rotated.body.refresh_token);
    expect(next.body.error).toBe("invalid_grant");
  });

  it("refuses a refresh or a code exchange once the API key or the user behind the grant is gone, and ends the grant", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const revokeKey = async (id: string) => {
      const answer = await fetch(`${gateway.url}/v1/api-keys/${id}`, {
        method: "DELETE",
        headers: { "x-gateway-api-key": gateway.adminKey },
      });
      expect(answer.status).toBeLessThan(300);
    };
    const newKey = (name: string) =>
      createApiKey(records(), {
        organisationId,
        workspaceId: server.workspaceId,
        name,
        keyType: "workspace",
        keySubType: "service",
        scopes: ["mcp_servers.read"],
      });

    // A refresh after the key was revoked: invalid_grant, and the refresh token does not come back to life.
    const key = await newKey("revoked before refresh");
    const issued = (await exchange(clientId, await authorizeWithKey(clientId, challenge, key.secret), verifier)).body;
    await revokeKey(key.id);
    const refreshed = await refreshWith(clientId, issued.refresh_token);
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe("invalid_grant");
    expect(refreshed.body.access_token).toBeUndefined();
    expect((await introspect(issued.refresh_token)).body.active).toBe(false);

    // A code whose key was revoked between consent and exchange issues nothing.
    const other = await newKey("revoked before exchange");
    const code = await authorizeWithKey(clientId, challenge, other.secret);
    await revokeKey(other.id);
    const exchanged = await exchange(clientId, code, verifier);
    expect(exchanged.status).toBe(400);
    expect(exchanged.body.error).toBe("invalid_grant");

    // A session grant ends with its user: deactivated (SCIM active: false), the refresh is refused, and
    // reactivating the user does not revive the grant.
    const user = await seedUser(gateway, `leaver-${randomBytes(3).toString("hex")}@example.com`);
    await seedMember(gateway, server.workspaceId, user.id, "member");
    const session = await createSession(records(), { organisationId, userId: user.id }, 3600);
    const cookie = `gateway_session=${session.id}`;
    const consent = await (await fetch(authorizeUrl(clientId, challenge), { headers: { cookie } })).text();
    const approved = await fetch(`${gateway.url}/oauth/authorize/consent`, {
      ...pageForm(
        gateway.url,
        { request_id: hiddenField(consent, "request_id")!, csrf: hiddenField(consent, "csrf")!, decision: "approve" },
        { cookie },
      ),
    });
    const sessionTokens = (await exchange(clientId, codeOf(approved), verifier)).body;
    expect(sessionTokens.refresh_token).toMatch(/^gwort_/);
    const { userStore } = await import("../../core/control/users.ts");
    const stored = (await userStore(records()).get(organisationId, user.id))!;
    const deactivated = await userStore(records()).update(stored, { active: false });
    const afterLeaving = await refreshWith(clientId, sessionTokens.refresh_token);
    expect(afterLeaving.body.error).toBe("invalid_grant");
    await userStore(records()).update(deactivated, { active: true });
    expect(await bearer(sessionTokens.access_token)).toBeInstanceOf(HttpError);
  });

  it("confidential clients authenticate with their secret (basic)", async () => {
    const registered = (
      await register({
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: "client_secret_basic",
        client_name: "Conf",
      })
    ).body;
    const basic = `Basic ${Buffer.from(`${registered.client_id}:${registered.client_secret}`).toString("base64")}`;
    const { verifier, challenge } = pkce();
    const code = await authorizeWithKey(registered.client_id, challenge, workspaceKey);
    const noSecret = await exchange(registered.client_id, code, verifier);
    expect(noSecret.status).toBe(401);
    expect(noSecret.body.error).toBe("invalid_client");
    const code2 = await authorizeWithKey(registered.client_id, challenge, workspaceKey);
    const wrong = `Basic ${Buffer.from(`${registered.client_id}:nope`).toString("base64")}`;
    expect(
      (
        await token(
          { grant_type: "authorization_code", code: code2, code_verifier: verifier, redirect_uri: REDIRECT },
          { authorization: wrong },
        )
      ).status,
    ).toBe(401);
    const code3 = await authorizeWithKey(registered.client_id, challenge, workspaceKey);
    const ok = await token(
      { grant_type: "authorization_code", code: code3, code_verifier: verifier, redirect_uri: REDIRECT },
      { authorization: basic },
    );
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    // The client itself may introspect the tokens it was issued.
    const init = form({ token: ok.body.access_token });
    const own = await fetch(`${gateway.url}/oauth/introspect`, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: basic },
    });
    expect((await own.json()).active).toBe(true);
  });
});

describe("introspection and revocation", () => {
  it("introspects a user-key grant with display_name; other organisations and workspace keys learn nothing", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const issued = (await exchange(clientId, await authorizeWithKey(clientId, challenge, userKey.secret), verifier))
      .body;
    const answer = await introspect(issued.access_token);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      active: true,
      scope: "mcp",
      client_id: clientId,
      username: "dana@example.com",
      display_name: "Dana Display",
      sub: userId,
      aud: resourceOf(server.id),
      token_type: "Bearer",
      iss: gateway.url,
    });
    expect(answer.body.exp - answer.body.iat).toBe(3600);
    const otherOrganisation = await createApiKey(records(), {
      organisationId: "org_other_introspect",
      name: "other",
      keyType: "organisation",
      keySubType: "service",
      scopes: ["*"],
    });
    expect((await introspect(issued.access_token, otherOrganisation.secret)).body).toEqual({ active: false });
    const workspaceCaller = await introspect(issued.access_token, workspaceKey);
    expect(workspaceCaller.status).toBe(401);
    expect(workspaceCaller.body.error).toBe("invalid_client");
    expect((await introspect("gwoat_nothing")).body).toEqual({ active: false });
    // A public client cannot introspect.
    const publicCall = await fetch(
      `${gateway.url}/oauth/introspect`,
      form({ token: issued.access_token, client_id: clientId }),
    );
    expect(publicCall.status).toBe(401);
  });

  it("revokes access tokens alone and refresh tokens with their family", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const issued = (await exchange(clientId, await authorizeWithKey(clientId, challenge, workspaceKey), verifier)).body;
    const otherClient = await publicClient();
    const foreign = await fetch(
      `${gateway.url}/oauth/revoke`,
      form({ token: issued.access_token, client_id: otherClient }),
    );
    expect(foreign.status).toBe(200);
    expect((await introspect(issued.access_token)).body.active).toBe(true);
    const revoked = await fetch(
      `${gateway.url}/oauth/revoke`,
      form({ token: issued.access_token, client_id: clientId }),
    );
    expect(revoked.status).toBe(200);
    expect((await introspect(issued.access_token)).body.active).toBe(false);
    expect((await introspect(issued.refresh_token)).body.active).toBe(true);
    const refreshed = await refreshWith(clientId, issued.refresh_token);
    expect(refreshed.status).toBe(200);
    await fetch(`${gateway.url}/oauth/revoke`, form({ token: refreshed.body.refresh_token, client_id: clientId }));
    expect((await introspect(refreshed.body.access_token)).body.active).toBe(false);
  });
});

describe("authenticateMcpBearer", () => {
  it("accepts a token for its resource (by id or slug) only, and only while its identity holds", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const key = await createApiKey(records(), {
      organisationId,
      workspaceId: server.workspaceId,
      name: "short-lived",
      keyType: "workspace",
      keySubType: "service",
      scopes: ["mcp_servers.read"],
    });
    const issued = (await exchange(clientId, await authorizeWithKey(clientId, challenge, key.secret), verifier)).body;
    expect(await bearer(issued.access_token, resourceOf(server.id))).toMatchObject({
      kind: "oauth",
      keyId: key.id,
      scopes: ["mcp_servers.read"],
    });
    expect(await bearer(issued.access_token, resourceOf(server.slug))).toMatchObject({ kind: "oauth" });
    const elsewhere = await bearer(issued.access_token, resourceOf(otherServer.id));
    expect(elsewhere).toBeInstanceOf(HttpError);
    expect((elsewhere as HttpError).status).toBe(401);
    expect((elsewhere as HttpError).headers["www-authenticate"]).toContain('error="invalid_token"');
    expect((elsewhere as HttpError).headers["www-authenticate"]).toContain(
      `resource_metadata="${gateway.url}/.well-known/oauth-protected-resource/mcp/${otherServer.id}"`,
    );
    for (const bad of ["", "gwoat_forged", issued.refresh_token, gateway.adminKey]) {
      expect(await bearer(bad)).toBeInstanceOf(HttpError);
    }
    // An expired access token is refused.
    const { sha256Hex } = await import("../../core/ids.ts");
    const second = (await exchange(clientId, await authorizeWithKey(clientId, challenge, key.secret), verifier)).body;
    await records().update(`OAUTHAT#${sha256Hex(second.access_token)}`, "OAUTHAT", {
      set: { expiresAt: Math.floor(Date.now() / 1000) - 1 },
    });
    expect(await bearer(second.access_token)).toBeInstanceOf(HttpError);
    // OAuth tokens open only the MCP endpoint, never the rest of the API.
    const api = await fetch(`${gateway.url}/v1/admin/workspaces`, {
      headers: { authorization: `Bearer ${issued.access_token}` },
    });
    expect(api.status).toBe(401);
    // Revoking the API key behind the grant ends its tokens at once.
    const revokedKey = await fetch(`${gateway.url}/v1/api-keys/${key.id}`, {
      method: "DELETE",
      headers: { "x-gateway-api-key": gateway.adminKey },
    });
    expect(revokedKey.status).toBeLessThan(300);
    expect(await bearer(issued.access_token)).toBeInstanceOf(HttpError);
  });

  it("a grant without resource has no audience", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const params = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const code = codeOf(
      await signInWithKeyAndAllow(gateway.url, `${gateway.url}/oauth/authorize?${params}`, workspaceKey),
    );
    const issued = (await exchange(clientId, code, verifier)).body;
    expect(await bearer(issued.access_token, resourceOf(server.id))).toMatchObject({ kind: "oauth" });
  });
});

describe("sign-in with SSO", () => {
  it("the sign-in page sends the user through SSO and back to the authorize request, signed in", async () => {
    const idp = await startOidcProvider();
    try {
      idp.clients.set("gateway-web", { secret: "web-client-secret-0123456789" });
      idp.nextUser = { email: "dana@example.com", email_verified: true, name: "Dana" };
      const put = await fetch(`${gateway.url}/v1/admin/organisation/sso`, {
        method: "PUT",
        headers: { "x-gateway-api-key": gateway.adminKey, "content-type": "application/json" },
        body: JSON.stringify({
          issuer: idp.issuer,
          client_id: "gateway-web",
          client_secret: "web-client-secret-0123456789",
          token_endpoint_auth_method: "client_secret_basic",
          allowed_domains: ["example.com"],
        }),
      });
      expect(put.status).toBe(200);
      const clientId = await publicClient();
      const { verifier, challenge } = pkce();
      const signIn = await (await fetch(authorizeUrl(clientId, challenge))).text();
      const link = /href="([^"]+)"/.exec(signIn)?.[1]?.replace(/&amp;/g, "&");
      expect(link).toMatch(/^\/v1\/auth\/sso\/login\?redirect=/);
      const login = await fetch(`${gateway.url}${link}`, { redirect: "manual" });
      const atIdp = await fetch(login.headers.get("location")!, { redirect: "manual" });
      const callback = await fetch(atIdp.headers.get("location")!, { redirect: "manual" });
      expect(callback.status).toBe(302);
      const back = callback.headers.get("location")!;
      expect(back.startsWith("/oauth/authorize?")).toBe(true);
      const cookie = callback.headers
        .getSetCookie()
        .map((value) => value.split(";")[0])
        .join("; ");
      const consent = await (await fetch(`${gateway.url}${back}`, { headers: { cookie } })).text();
      expect(consent).toContain("Signed in as dana@example.com");
      const decided = await fetch(`${gateway.url}/oauth/authorize/consent`, {
        ...pageForm(
          gateway.url,
          { request_id: hiddenField(consent, "request_id")!, csrf: hiddenField(consent, "csrf")!, decision: "approve" },
          { cookie },
        ),
      });
      const code = new URL(decided.headers.get("location")!).searchParams.get("code")!;
      const issued = (await exchange(clientId, code, verifier)).body;
      expect((await introspect(issued.access_token)).body).toMatchObject({
        active: true,
        sub: userId,
        display_name: "Dana Display",
      });
    } finally {
      await idp.close();
    }
  });
});

describe("the MCP SDK's OAuth client", () => {
  it("discovers, registers, authorizes with PKCE and exchanges the code against the gateway", async () => {
    let client: OAuthClientInformationMixed | undefined;
    let tokens: OAuthTokens | undefined;
    let verifier = "";
    let authorizationUrl: URL | undefined;
    const provider: OAuthClientProvider = {
      redirectUrl: REDIRECT,
      clientMetadata: {
        client_name: "SDK client",
        redirect_uris: [REDIRECT],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      clientInformation: () => client,
      saveClientInformation: (information) => {
        client = information;
      },
      tokens: () => tokens,
      saveTokens: (saved) => {
        tokens = saved;
      },
      redirectToAuthorization: (url) => {
        authorizationUrl = url;
      },
      saveCodeVerifier: (value) => {
        verifier = value;
      },
      codeVerifier: () => verifier,
    };
    const serverUrl = resourceOf(server.slug);
    expect(await auth(provider, { serverUrl })).toBe("REDIRECT");
    expect(authorizationUrl?.searchParams.get("resource")).toBe(serverUrl);
    expect(authorizationUrl?.searchParams.get("code_challenge_method")).toBe("S256");
    // The user signs in with a key and allows, as a browser would.
    const code = codeOf(await signInWithKeyAndAllow(gateway.url, authorizationUrl!, workspaceKey));
    expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe("AUTHORIZED");
    expect(tokens?.access_token).toMatch(/^gwoat_/);
    expect(await bearer(tokens!.access_token, serverUrl)).toMatchObject({
      kind: "oauth",
      workspaceId: server.workspaceId,
    });
    // And its refresh (tokens held, no code): a rotated pair.
    const before = tokens!.refresh_token;
    expect(await auth(provider, { serverUrl })).toBe("AUTHORIZED");
    expect(tokens?.refresh_token).not.toBe(before);
  });
});

describe("audit", () => {
  it("records registrations and grants, without secrets", async () => {
    const response = await fetch(`${gateway.url}/v1/audit-logs?limit=100`, {
      headers: { "x-gateway-api-key": gateway.adminKey },
    });
    expect(response.status).toBe(200);
    const entries = ((await response.json()) as any).data as Array<Record<string, unknown>>;
    const types = new Set(entries.map((entry) => entry.resource_type));
    expect(types).toContain("oauth_client");
    expect(types).toContain("oauth_grant");
    expect(JSON.stringify(entries)).not.toMatch(/gwocs-|gwoat_|gwort_|gwoac_/);
  });
});
