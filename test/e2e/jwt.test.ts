import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type CryptoKey, type JWK, SignJWT, exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getOrganisation, updateOrganisation } from "../../core/control/organisation/store.ts";
import { userStore } from "../../core/control/users/store.ts";
import { call, seedMember, seedUser, seedWorkspace } from "../helpers/control.ts";
import { startOpenAIMock } from "../mocks/openai.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/** JWT authentication (spec 5.4): inline JWKS and a JWKS URL, claim checks, membership, scopes, /auth/self. */

const ISSUER = "https://idp.example.test";
const AUDIENCE = "ai-gateway";

let privateKey: CryptoKey;
let otherPrivateKey: CryptoKey;
let jwk: JWK;
let inline: TestGateway;
let remote: TestGateway;
let untrusted: TestGateway;
let flaky: TestGateway;
let down: TestGateway;
let jwksServer: Server;
let flakyServer: Server;
/** The flaky JWKS server's answer: 200 with the key set, or this status. */
let flakyStatus = 200;
let jwksHits = 0;
const ws: Record<string, string> = {};

async function token(
  claims: Record<string, unknown>,
  options: { key?: CryptoKey; issuer?: string; audience?: string; expires?: string | number } = {},
) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "RS256", kid: "test-key" })
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(options.expires ?? "10m")
    .sign(options.key ?? privateKey);
}

const bearer = (jwt: string) => ({ authorization: `Bearer ${jwt}` });

async function seedPeople(gateway: TestGateway) {
  const wsA = await seedWorkspace(gateway, "JWT A");
  const alice = await seedUser(gateway, "alice@example.com");
  await seedUser(gateway, "bob@example.com");
  await seedUser(gateway, "root@example.com", "admin");
  await seedMember(gateway, wsA.id, alice.id, "member");
  return wsA;
}

beforeAll(async () => {
  const pair = await generateKeyPair("RS256", { extractable: true });
  privateKey = pair.privateKey;
  otherPrivateKey = (await generateKeyPair("RS256")).privateKey;
  jwk = { ...(await exportJWK(pair.publicKey)), kid: "test-key", alg: "RS256", use: "sig" };
  const jwks = JSON.stringify({ keys: [jwk] });

  jwksServer = createServer((request, response) => {
    jwksHits++;
    if (request.url !== "/.well-known/jwks.json") return response.writeHead(404).end();
    response.writeHead(200, { "content-type": "application/json" }).end(jwks);
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, "127.0.0.1", resolve));
  const jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`;

  inline = await startTestGateway({
    GATEWAY_JWT_JWKS: jwks,
    GATEWAY_JWT_ISSUER: ISSUER,
    GATEWAY_JWT_AUDIENCE: AUDIENCE,
    GATEWAY_JWT_CLOCK_TOLERANCE_SECONDS: "0",
  });
  ws.inline = (await seedPeople(inline)).id;
  remote = await startTestGateway({
    GATEWAY_JWT_JWKS_URL: jwksUrl,
    GATEWAY_JWT_ISSUER: ISSUER,
    GATEWAY_JWT_AUDIENCE: AUDIENCE,
  });
  ws.remote = (await seedPeople(remote)).id;
  // Without 127.0.0.1 in TRUSTED_CUSTOM_HOSTS the JWKS URL is a private address: refused (SSRF guard).
  untrusted = await startTestGateway({ GATEWAY_JWT_JWKS_URL: jwksUrl, TRUSTED_CUSTOM_HOSTS: "" });
  ws.untrusted = (await seedPeople(untrusted)).id;

  flakyServer = createServer((_request, response) => {
    if (flakyStatus !== 200) return response.writeHead(flakyStatus).end("unavailable");
    response.writeHead(200, { "content-type": "application/json" }).end(jwks);
  });
  await new Promise<void>((resolve) => flakyServer.listen(0, "127.0.0.1", resolve));
  flaky = await startTestGateway({
    GATEWAY_JWT_JWKS_URL: `http://127.0.0.1:${(flakyServer.address() as AddressInfo).port}/jwks.json`,
  });
  ws.flaky = (await seedPeople(flaky)).id;
  // A JWKS URL where nothing listens: a port that was free a moment ago.
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  down = await startTestGateway({ GATEWAY_JWT_JWKS_URL: `http://127.0.0.1:${closedPort}/jwks.json` });
  ws.down = (await seedPeople(down)).id;
});

afterAll(async () => {
  await Promise.all([inline?.close(), remote?.close(), untrusted?.close(), flaky?.close(), down?.close()]);
  await new Promise((resolve) => jwksServer?.close(resolve));
  await new Promise((resolve) => flakyServer?.close(resolve));
});

describe("JWT authentication", () => {
  it("GET /v1/auth/self returns the user behind a JWT and rejects API keys", async () => {
    const jwt = await token({ email: "Alice@example.com", workspace_id: ws.inline, scope: "logs.list agents.invoke" });
    const self = await call(inline, undefined, "GET", "/v1/auth/self", undefined, bearer(jwt));
    expect(self.status).toBe(200);
    expect(self.body).toMatchObject({
      object: "user",
      email: "Alice@example.com",
      workspace_id: ws.inline,
      workspace_role: "member",
    });
    expect(self.body.scopes.sort()).toEqual(["agents.invoke", "logs.list"]);
    expect(self.body.id).toMatch(/^usr_/);

    const withKey = await call(inline, inline.adminKey, "GET", "/v1/auth/self");
    expect(withKey.status).toBe(403);
    expect(withKey.body.error.code).toBe("jwt_required");
    expect((await call(inline, undefined, "GET", "/v1/auth/self")).status).toBe(401);
  });

  it("accepts a workspace slug, the portkey_workspace alias and a scopes array", async () => {
    const jwt = await token({ email: "alice@example.com", portkey_workspace: ws.inline, scopes: ["logs.list"] });
    const self = await call(inline, undefined, "GET", "/v1/auth/self", undefined, bearer(jwt));
    expect(self.status).toBe(200);
    expect(self.body.scopes).toEqual(["logs.list"]);
  });

  it("rejects expired tokens, wrong issuer or audience and bad signatures with 401", async () => {
    const claims = { email: "alice@example.com", workspace_id: ws.inline };
    const cases = {
      expired: await token(claims, { expires: Math.floor(Date.now() / 1000) - 60 }),
      issuer: await token(claims, { issuer: "https://evil.example" }),
      audience: await token(claims, { audience: "someone-else" }),
      signature: await token(claims, { key: otherPrivateKey }),
    };
    for (const [name, jwt] of Object.entries(cases)) {
      const answer = await call(inline, undefined, "GET", "/v1/auth/self", undefined, bearer(jwt));
      expect(answer.status, name).toBe(401);
    }
    const tampered = `${cases.issuer.split(".").slice(0, 2).join(".")}.${"A".repeat(342)}`;
    expect((await call(inline, undefined, "GET", "/v1/auth/self", undefined, bearer(tampered))).status).toBe(401);
  });

  it("enforces workspace membership: non-members and unknown users get 403", async () => {
    const bob = await token({ email: "bob@example.com", workspace_id: ws.inline });
    expect((await call(inline, undefined, "GET", "/v1/auth/self", undefined, bearer(bob))).status).toBe(403);
    const stranger = await token({ email: "nobody@example.com", workspace_id: ws.inline });
    expect((await call(inline, undefined, "GET", "/v1/auth/self", undefined, bearer(stranger))).status).toBe(403);
    const noWorkspace = await token({ email: "alice@example.com" });
    expect((await call(inline, undefined, "GET", "/v1/auth/self", undefined, bearer(noWorkspace))).status).toBe(403);
    const otherOrg = await token({ email: "alice@example.com", workspace_id: ws.inline, organisation_id: "org_other" });
    expect((await call(inline, undefined, "GET", "/v1/auth/self", undefined, bearer(otherOrg))).status).toBe(403);
    // An organisation admin may act without a workspace.
    const root = await token({ email: "root@example.com", scope: "api_keys.list" });
    const self = await call(inline, undefined, "GET", "/v1/auth/self", undefined, bearer(root));
    expect(self.status).toBe(200);
    expect(self.body).toMatchObject({ role: "admin", workspace_id: null });
  });

  it("refuses the JWT of a deactivated (deprovisioned) admin, though it names no workspace", async () => {
    const gone = await seedUser(inline, "gone-admin@example.com", "admin");
    const jwt = await token({ email: "gone-admin@example.com", scope: "api_keys.list" });
    expect((await call(inline, undefined, "GET", "/v1/auth/self", undefined, bearer(jwt))).status).toBe(200);
    const { records } = inline.gateway.services.stores;
    await userStore(records).update(gone, { active: false });
    // A token the gateway verified before stays cached for up to 60 s (as API keys are); a new one is refused.
    const fresh = await token({ email: "gone-admin@example.com", scope: "api_keys.list logs.list" });
    const refused = await call(inline, undefined, "GET", "/v1/auth/self", undefined, bearer(fresh));
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("user_deactivated");
  });

  it("applies the token's scopes and workspace to control-plane routes", async () => {
    const reader = await token({ email: "alice@example.com", workspace_id: ws.inline, scope: "logs.list" });
    expect((await call(inline, undefined, "GET", "/v1/logs", undefined, bearer(reader))).status).toBe(200);
    const denied = await call(inline, undefined, "GET", "/v1/api-keys", undefined, bearer(reader));
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain("api_keys.list");
    const wide = await token({ email: "alice@example.com", workspace_id: ws.inline, scope: "*" });
    // A workspace member cannot create keys, nor act on another workspace.
    expect(
      (await call(inline, undefined, "POST", "/v1/api-keys/workspace/service", { name: "x", scopes: [] }, bearer(wide)))
        .status,
    ).toBe(403);
    expect(
      (await call(inline, undefined, "GET", "/v1/logs?workspace_id=ws_other", undefined, bearer(wide))).status,
    ).toBe(403);
  });

  it("reads Authorization as a JWT only when no gateway key is sent and it is well-formed", async () => {
    // A provider key in Authorization (no gateway key) is not a JWT: the usual 401 for a missing key.
    const notJwt = await call(inline, undefined, "GET", "/v1/logs", undefined, {
      authorization: "Bearer sk-provider-key",
    });
    expect(notJwt.status).toBe(401);
    // With a gateway key, Authorization is left alone (it is the provider's).
    const jwt = await token({ email: "bob@example.com", workspace_id: ws.inline });
    expect((await call(inline, inline.adminKey, "GET", "/v1/logs", undefined, bearer(jwt))).status).toBe(200);
    // A gateway without JWT configuration never reads it as one.
    const plain = await startTestGateway();
    try {
      const answer = await call(
        plain,
        undefined,
        "GET",
        "/v1/auth/self",
        undefined,
        bearer(await token({ email: "alice@example.com" })),
      );
      expect(answer.status).toBe(401);
    } finally {
      await plain.close();
    }
  });

  it("authenticates inference with a JWT without forwarding it upstream; the organisation setting blocks inline choices", async () => {
    const upstream = await startOpenAIMock();
    try {
      const jwt = await token({ email: "alice@example.com", workspace_id: ws.inline, scope: "agents.invoke" });
      const headers = { ...bearer(jwt), "x-gateway-provider": "openai", "x-gateway-custom-host": `${upstream.url}/v1` };
      const body = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] };
      const answer = await call(inline, undefined, "POST", "/v1/chat/completions", body, headers);
      expect(answer.status, answer.text).toBe(200);
      expect(upstream.lastRequest()?.headers.authorization ?? "").not.toContain(jwt);

      // block_inline_config set on the organisation (cached settings are dropped after the change).
      const { records } = inline.gateway.services.stores;
      const organisationId = inline.gateway.bootstrap.organisationId;
      const organisation = await getOrganisation(records, organisationId);
      await updateOrganisation(records, organisation, {
        settings: { ...organisation.settings, block_inline_config: true },
      });
      inline.gateway.services.orgSettings.forget(organisationId);
      try {
        const blocked = await call(inline, undefined, "POST", "/v1/chat/completions", body, headers);
        expect(blocked.status).toBe(403);
        expect(blocked.body.error.code).toBe("inline_config_blocked");
      } finally {
        const current = await getOrganisation(records, organisationId);
        await updateOrganisation(records, current, { settings: { ...current.settings, block_inline_config: false } });
        inline.gateway.services.orgSettings.forget(organisationId);
      }
      expect((await call(inline, undefined, "POST", "/v1/chat/completions", body, headers)).status).toBe(200);
    } finally {
      await upstream.close();
    }
  });

  it("verifies against a JWKS URL (trusted host), and refuses an untrusted private JWKS URL", async () => {
    const jwt = await token({ email: "alice@example.com", workspace_id: ws.remote });
    const first = await call(remote, undefined, "GET", "/v1/auth/self", undefined, bearer(jwt));
    expect(first.status).toBe(200);
    expect(first.body.email).toBe("alice@example.com");
    expect(jwksHits).toBeGreaterThan(0);
    const hits = jwksHits;
    const again = await token({ email: "alice@example.com", workspace_id: ws.remote, scope: "logs.list" });
    expect((await call(remote, undefined, "GET", "/v1/auth/self", undefined, bearer(again))).status).toBe(200);
    expect(jwksHits).toBe(hits); // the key set is cached
    const expired = await token(
      { email: "alice@example.com", workspace_id: ws.remote },
      { expires: Math.floor(Date.now() / 1000) - 120 },
    );
    expect((await call(remote, undefined, "GET", "/v1/auth/self", undefined, bearer(expired))).status).toBe(401);

    const refused = await call(
      untrusted,
      undefined,
      "GET",
      "/v1/auth/self",
      undefined,
      bearer(await token({ email: "alice@example.com", workspace_id: ws.untrusted })),
    );
    // The JWKS cannot be read (refused by the SSRF guard): the token cannot be judged, so 503, not 401.
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe("jwks_unavailable");
  });

  it("answers 503 (retryable), never 500 or 401, while the JWKS is unreachable or failing", async () => {
    const self = async (gateway: TestGateway, workspace: string) =>
      call(
        gateway,
        undefined,
        "GET",
        "/v1/auth/self",
        undefined,
        bearer(await token({ email: "alice@example.com", workspace_id: workspace })),
      );
    const refused = await self(down, ws.down!);
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ type: "server_error", code: "jwks_unavailable" });

    flakyStatus = 500;
    const failing = await self(flaky, ws.flaky!);
    expect(failing.status).toBe(503);
    expect(failing.body.error.code).toBe("jwks_unavailable");
    // Once the JWKS answers again, the same kind of token is accepted: the failure was not remembered.
    flakyStatus = 200;
    expect((await self(flaky, ws.flaky!)).status).toBe(200);
    // A token signed by a key the (reachable) JWKS does not hold is still the token's fault: 401.
    const foreign = await token({ email: "alice@example.com", workspace_id: ws.flaky }, { key: otherPrivateKey });
    expect((await call(flaky, undefined, "GET", "/v1/auth/self", undefined, bearer(foreign))).status).toBe(401);
  });
});
