import { createHash, randomBytes } from "node:crypto";
import { type JWK, SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify } from "jose";
import { type MockServer, type RecordedRequest, startMockServer } from "./mock-server.ts";

/**
 * A small OpenID provider for tests, over real HTTP on 127.0.0.1. It follows OpenID Connect Discovery 1.0
 * (/.well-known/openid-configuration), Core 1.0 (authorisation-code flow, ID token claims, client
 * authentication: client_secret_basic, client_secret_post, private_key_jwt per RFC 7523) and RFC 7636 (PKCE S256).
 * `/authorize` signs in `nextUser` at once and redirects back with a code; codes are single use.
 */

export interface OidcUser {
  sub?: string;
  email: string;
  email_verified?: boolean;
  name?: string;
}

export interface OidcClient {
  secret?: string;
  /** The public keys of a private_key_jwt client. */
  jwks?: { keys: JWK[] };
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce?: string;
  user: OidcUser;
}

export interface OidcProvider {
  issuer: string;
  server: MockServer;
  clients: Map<string, OidcClient>;
  nextUser: OidcUser;
  /** Claims to force into the next ID token (a wrong nonce or audience, an expired token...). */
  nextIdTokenOverrides?: Record<string, unknown>;
  /** How each token request authenticated its client. */
  tokenAuth: string[];
  close(): Promise<void>;
}

const b64url = (bytes: Buffer) => bytes.toString("base64url");

export async function startOidcProvider(): Promise<OidcProvider> {
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const publicJwk = { ...(await exportJWK(publicKey)), kid: "idp-1", alg: "RS256", use: "sig" };
  const codes = new Map<string, PendingCode>();
  let issuer = "";

  const provider: OidcProvider = {
    issuer: "",
    server: undefined as unknown as MockServer,
    clients: new Map(),
    nextUser: { email: "alice@example.com", email_verified: true, name: "Alice" },
    tokenAuth: [],
    close: () => provider.server.close(),
  };

  const send = (res: import("node:http").ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify(body));
  };

  /** Core 1.0 section 9: client authentication at the token endpoint. Returns the client id, or an error. */
  async function authenticateClient(request: RecordedRequest, form: URLSearchParams): Promise<string | undefined> {
    const basic = /^Basic (.+)$/.exec(String(request.headers.authorization ?? ""));
    if (basic) {
      const [id, secret] = Buffer.from(basic[1]!, "base64").toString().split(":").map(decodeURIComponent);
      const client = provider.clients.get(id!);
      provider.tokenAuth.push("client_secret_basic");
      return client?.secret && client.secret === secret ? id : undefined;
    }
    if (form.get("client_assertion_type") === "urn:ietf:params:oauth:client-assertion-type:jwt-bearer") {
      provider.tokenAuth.push("private_key_jwt");
      const assertion = form.get("client_assertion") ?? "";
      const id = JSON.parse(Buffer.from(assertion.split(".")[1] ?? "", "base64url").toString() || "{}").sub;
      const client = provider.clients.get(id);
      if (!client?.jwks) return undefined;
      try {
        const { payload } = await jwtVerify(assertion, createLocalJWKSet(client.jwks), {
          issuer: id,
          subject: id,
          audience: [issuer, `${issuer}/token`],
        });
        return payload.jti ? id : undefined;
      } catch {
        return undefined;
      }
    }
    const id = form.get("client_id") ?? "";
    provider.tokenAuth.push("client_secret_post");
    const client = provider.clients.get(id);
    return client?.secret && client.secret === form.get("client_secret") ? id : undefined;
  }

  provider.server = await startMockServer(async (request, res) => {
    const url = new URL(request.path, issuer);
    if (url.pathname === "/.well-known/openid-configuration") {
      return send(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "private_key_jwt"],
        code_challenge_methods_supported: ["S256"],
      });
    }
    if (url.pathname === "/jwks") return send(res, 200, { keys: [publicJwk] });
    if (url.pathname === "/authorize") {
      const q = url.searchParams;
      const redirectUri = q.get("redirect_uri") ?? "";
      if (q.get("response_type") !== "code" || !provider.clients.has(q.get("client_id") ?? "") || !redirectUri)
        return send(res, 400, { error: "invalid_request" });
      if (q.get("code_challenge_method") !== "S256" || !q.get("code_challenge"))
        return send(res, 400, { error: "invalid_request", error_description: "PKCE S256 required" });
      const code = b64url(randomBytes(24));
      codes.set(code, {
        clientId: q.get("client_id")!,
        redirectUri,
        challenge: q.get("code_challenge")!,
        nonce: q.get("nonce") ?? undefined,
        user: provider.nextUser,
      });
      const back = new URL(redirectUri);
      back.searchParams.set("code", code);
      if (q.get("state")) back.searchParams.set("state", q.get("state")!);
      back.searchParams.set("iss", issuer);
      res.writeHead(302, { location: back.href });
      res.end();
      return;
    }
    if (url.pathname === "/token" && request.method === "POST") {
      const form = new URLSearchParams(request.body.toString());
      const clientId = await authenticateClient(request, form);
      if (!clientId) return send(res, 401, { error: "invalid_client" });
      const code = form.get("code") ?? "";
      const pending = codes.get(code);
      codes.delete(code); // single use, whatever happens next
      if (form.get("grant_type") !== "authorization_code" || !pending || pending.clientId !== clientId)
        return send(res, 400, { error: "invalid_grant" });
      if (form.get("redirect_uri") !== pending.redirectUri) return send(res, 400, { error: "invalid_grant" });
      const verifier = form.get("code_verifier") ?? "";
      if (b64url(createHash("sha256").update(verifier).digest()) !== pending.challenge)
        return send(res, 400, { error: "invalid_grant", error_description: "PKCE verification failed" });
      const now = Math.floor(Date.now() / 1000);
      const claims: Record<string, unknown> = {
        sub: pending.user.sub ?? `sub-${pending.user.email}`,
        email: pending.user.email,
        email_verified: pending.user.email_verified,
        name: pending.user.name,
        nonce: pending.nonce,
        ...provider.nextIdTokenOverrides,
      };
      provider.nextIdTokenOverrides = undefined;
      const idToken = await new SignJWT(claims)
        .setProtectedHeader({ alg: "RS256", kid: "idp-1" })
        .setIssuer(String(claims.iss ?? issuer))
        .setAudience((claims.aud as string) ?? clientId)
        .setIssuedAt(now)
        .setExpirationTime(typeof claims.exp === "number" ? claims.exp : now + 300)
        .sign(privateKey);
      return send(res, 200, {
        access_token: b64url(randomBytes(24)),
        token_type: "Bearer",
        expires_in: 300,
        id_token: idToken,
      });
    }
    send(res, 404, { error: "not_found" });
  });
  issuer = provider.server.url;
  provider.issuer = issuer;
  return provider;
}
