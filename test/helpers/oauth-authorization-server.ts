import { createHash, randomBytes } from "node:crypto";
import { type MockServer, sendJson, startMockServer } from "./mock-server.ts";

/**
 * A small OAuth 2.1 authorization server in front of an "upstream MCP server" at `<url>/mcp`, for tests of the
 * gateway as an OAuth client: protected-resource and authorization-server metadata, dynamic registration, an
 * authorize endpoint that approves at once (redirecting with a code), and a token endpoint checking client
 * secrets (basic), PKCE S256 and redirect URIs, rotating refresh tokens.
 */

export interface MockAuthorizationServer {
  url: string;
  mock: MockServer;
  /** Registered clients by id. */
  clients: Map<string, { secret: string; redirectUris: string[] }>;
  /** Access tokens issued, newest last. */
  accessTokens: string[];
  /** Token requests by grant type. */
  grants: string[];
  /** Seconds until issued access tokens expire. */
  expiresIn: number;
  close(): Promise<void>;
}

export async function startMockAuthorizationServer(): Promise<MockAuthorizationServer> {
  const codes = new Map<string, { clientId: string; challenge: string; redirectUri: string; resource?: string }>();
  const refreshTokens = new Map<string, string>();
  const state: Omit<MockAuthorizationServer, "url" | "mock" | "close"> = {
    clients: new Map(),
    accessTokens: [],
    grants: [],
    expiresIn: 3600,
  };
  let url = "";
  const issue = (clientId: string) => {
    const access = `upstream-at-${randomBytes(8).toString("hex")}`;
    const refresh = `upstream-rt-${randomBytes(8).toString("hex")}`;
    state.accessTokens.push(access);
    refreshTokens.set(refresh, clientId);
    return {
      access_token: access,
      token_type: "Bearer",
      expires_in: state.expiresIn,
      refresh_token: refresh,
      scope: "tools",
    };
  };
  const mock = await startMockServer((request, response) => {
    const path = new URL(request.path, "http://x").pathname;
    if (request.method === "GET" && path.startsWith("/.well-known/oauth-protected-resource")) {
      return sendJson(response, 200, {
        resource: `${url}/mcp`,
        authorization_servers: [url],
        scopes_supported: ["tools"],
      });
    }
    if (request.method === "GET" && path === "/.well-known/oauth-authorization-server") {
      return sendJson(response, 200, {
        issuer: url,
        authorization_endpoint: `${url}/authorize`,
        token_endpoint: `${url}/token`,
        registration_endpoint: `${url}/register`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["client_secret_basic"],
      });
    }
    if (request.method === "POST" && path === "/register") {
      const body = request.json();
      const clientId = `upstream-client-${randomBytes(4).toString("hex")}`;
      const secret = `upstream-secret-${randomBytes(8).toString("hex")}`;
      state.clients.set(clientId, { secret, redirectUris: body.redirect_uris });
      return sendJson(response, 201, { ...body, client_id: clientId, client_secret: secret });
    }
    if (request.method === "GET" && path === "/authorize") {
      const query = new URL(request.path, "http://x").searchParams;
      const client = state.clients.get(query.get("client_id") ?? "");
      const redirectUri = query.get("redirect_uri") ?? "";
      if (!client?.redirectUris.includes(redirectUri) || query.get("code_challenge_method") !== "S256") {
        return sendJson(response, 400, { error: "invalid_request" });
      }
      const code = randomBytes(16).toString("hex");
      codes.set(code, {
        clientId: query.get("client_id")!,
        challenge: query.get("code_challenge")!,
        redirectUri,
        resource: query.get("resource") ?? undefined,
      });
      const back = new URL(redirectUri);
      back.searchParams.set("code", code);
      back.searchParams.set("state", query.get("state") ?? "");
      response.writeHead(302, { location: back.href });
      response.end();
      return;
    }
    if (request.method === "POST" && path === "/token") {
      const form = new URLSearchParams(request.body.toString("utf8"));
      const basic = /^Basic (.+)$/.exec(String(request.headers.authorization ?? ""))?.[1];
      const [clientId, secret] = basic
        ? Buffer.from(basic, "base64").toString().split(":").map(decodeURIComponent)
        : [];
      if (!clientId || state.clients.get(clientId)?.secret !== secret) {
        return sendJson(response, 401, { error: "invalid_client" });
      }
      const grant = form.get("grant_type") ?? "";
      state.grants.push(grant);
      if (grant === "authorization_code") {
        const code = codes.get(form.get("code") ?? "");
        codes.delete(form.get("code") ?? "");
        const verifier = form.get("code_verifier") ?? "";
        const challenge = createHash("sha256").update(verifier).digest("base64url");
        if (
          !code ||
          code.clientId !== clientId ||
          code.challenge !== challenge ||
          code.redirectUri !== form.get("redirect_uri")
        ) {
          return sendJson(response, 400, { error: "invalid_grant" });
        }
        return sendJson(response, 200, issue(clientId));
      }
      if (grant === "refresh_token") {
        const owner = refreshTokens.get(form.get("refresh_token") ?? "");
        refreshTokens.delete(form.get("refresh_token") ?? "");
        if (owner !== clientId) return sendJson(response, 400, { error: "invalid_grant" });
        return sendJson(response, 200, issue(clientId));
      }
      return sendJson(response, 400, { error: "unsupported_grant_type" });
    }
    sendJson(response, 404, { error: "not_found" });
  });
  url = mock.url;
  return Object.assign(state, { url, mock, close: () => mock.close() });
}
