import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTE_FAMILIES, type RouteSpec } from "../../core/routes/table.ts";
import { call, createKey, seedMember, seedUser, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, startMockServer } from "../helpers/mock-server.ts";

/**
 * Workspace isolation matrix, derived from the route table. Every path parameter of every authenticated
 * control-plane route has a row in PARAMETER_ROWS saying which of workspace A's resources it names (or that it
 * names none); a route added with a parameter nobody classified fails the first test, and so does a family
 * missing from FAMILY_ROWS. Each route is then called by workspace B's keys (a service key and a member's user
 * key, both with `*`) aimed at A's resource, by id AND by slug where the resource has one, and aimed at an
 * unknown id / slug of the same shape: the answers must be alike (same status and error code: nothing tells
 * A's resources from ones that do not exist, 404 rather than 403), and never a success. The data plane's
 * references (x-gateway-config, @provider slug, x-gateway-virtual-key) are held to the same rule. Finally A's
 * resources must be unchanged.
 */

// Inference families; stored responses (the responses family) have their own isolation test in responses.test.ts,
// files, batches and fine-tuning jobs theirs in files.test.ts, batches.test.ts and fine-tuning.test.ts (their
// fixtures need provider mocks and the queue worker), Assistants API objects in assistants.test.ts.
const INFERENCE_FAMILIES = new Set([
  "chat",
  "files",
  "batches",
  "fine-tuning",
  "completions",
  "embeddings",
  "models",
  "passthrough",
  "responses",
  "messages",
  // Stateless inference: their logs' isolation is tested in images.test.ts, audio.test.ts and
  // moderations-rerank-ocr.test.ts; assistants (stored at the provider) in assistants.test.ts, realtime sessions
  // in realtime.test.ts.
  "images",
  "audio",
  "moderations",
  "rerank",
  "ocr",
  "assistants",
  "realtime",
  // MCP servers, their endpoint, the registry and MCP logs: other workspaces and organisations in
  // mcp-gateway.test.ts (the records come from the MCP admin API's family).
  "mcp",
]);

/** Every control-plane family: the resources A owns in it, or why it has none. Grow it with each new family. */
const FAMILY_ROWS: Record<string, string[] | { none: string }> = {
  health: { none: "public" },
  console: { none: "public static files (the web console)" },
  metrics: { none: "public" },
  blobs: { none: "signed URLs, no API key" },
  logs: ["log", "export", "trace"],
  feedback: ["feedback"],
  analytics: { none: "aggregates by workspace, listed by the no-parameter test" },
  configs: ["config"],
  guardrails: ["guardrail"],
  prompts: ["prompt", "partial", "label", "collection"],
  integrations: ["integration"],
  "virtual-keys": ["virtualKey"],
  "model-pricing": ["modelPrice"],
  agents: ["agentIntegration"],
  "api-keys": ["key"],
  auth: { none: "the caller's own identity" },
  sso: { none: "organisation-wide, admin only (other organisations: test/e2e/sso.test.ts)" },
  oauth: {
    none: "public OAuth endpoints (client credentials, sign-in forms); workspaces and organisations kept apart in mcp-oauth.test.ts and mcp-oauth-upstream.test.ts",
  },
  workspaces: ["workspace", "user"],
  users: ["user", "invite"],
  organisation: { none: "organisation-wide, admin only" },
  providers: { none: "workspace providers; kept apart in providers-api.test.ts" },
  "mcp-admin": ["mcpIntegration", "mcpServer"],
  scim: { none: "organisation-wide (a SCIM token or an admin key); organisations kept apart in scim.test.ts" },
  deployments: { none: "organisation-wide, admin only; other organisations: deployments.test.ts" },
  policies: ["usageLimit", "rateLimit"],
};

/**
 * Each route parameter, by the path up to it: the fixture of A it names, or `null` for parameters that name
 * no resource (a metric, a key type...).
 */
const PARAMETER_ROWS: Record<string, string | null> = {
  "/v1/logs/exports/:id": "export",
  "/v1/logs/traces/:traceId": "trace",
  "/v1/logs/:id": "log",
  "/v1/feedback/:id": "feedback",
  "/v1/analytics/graphs/:metric": null,
  "/v1/analytics/groups/:group": null,
  "/v1/analytics/graphs/feedbacks/:view": null,
  "/v1/analytics/groups/metadata/:key": null,
  "/v1/configs/:id": "config",
  "/v1/guardrails/:id": "guardrail",
  "/v1/prompts/partials/:id": "partial",
  "/v1/prompts/:id": "prompt",
  "/v1/prompts/:id/versions/:versionId": null,
  "/v1/labels/:id": "label",
  "/v1/collections/:id": "collection",
  "/v2/prompts/partials/:id": "partial",
  "/v2/prompts/:id": "prompt",
  "/v1/integrations/:id": "integration",
  "/v1/virtual-keys/:slug": "virtualKey",
  "/v1/model-pricing/:id": "modelPrice",
  "/v2/agent-integrations/:id": "agentIntegration",
  "/v1/agents/:agent": "agentIntegration",
  "/v1/api-keys/:id": "key",
  "/v1/api-keys/:type": null,
  "/v1/api-keys/:type/:subType": null,
  "/v1/admin/workspaces/:id": "workspace",
  "/v2/workspaces/:id": "workspace",
  "/v1/admin/workspaces/:id/users/:userId": "user",
  "/v1/admin/users/invites/:id": "invite",
  "/v1/admin/users/:id": "user",
  "/v2/policies/usage-limits/:id": "usageLimit",
  "/v1/policies/usage-limits/:id": "usageLimit",
  "/v2/policies/rate-limits/:id": "rateLimit",
  "/v1/policies/rate-limits/:id": "rateLimit",
  "/v1/providers/:id": null,
  "/v1/mcp-integrations/:id": "mcpIntegration",
  "/v1/mcp-servers/:id": "mcpServer",
  // Organisation-wide SCIM resources (admin keys only): organisations kept apart in scim.test.ts.
  "/v1/admin/scim/tokens/:id": null,
  "/v1/admin/scim/group-mappings/:id": null,
  "/v1/scim/workspaces/:id": null,
  "/v1/scim/workspaces/:id/groups/:groupId": null,
  // Organisation-level, admin only (403 for workspace keys); isolation across organisations: deployments.test.ts.
  "/v1/deployments/:id": null,
};

/** Request bodies valid for a route, so its answer comes from the lookup rather than from validation. */
const BODIES: Record<string, unknown> = {
  "PUT /v1/integrations/:id/models": { allow_all_models: false, models: [] },
  "PUT /v1/integrations/:id/integration-models": { allow_all_models: false, models: [] },
  "PUT /v1/integrations/:id/workspaces": { workspace_ids: [] },
  "PUT /v1/virtual-keys/:slug/workspaces": { workspace_ids: [] },
  "PUT /v1/admin/workspaces/:id/users/:userId": { role: "manager" },
  "PUT /v1/feedback/:id": { value: 1 },
  "PUT /v1/logs/exports/:id": { description: "probe" },
  "PUT /v1/configs/:id": { name: "probe" },
  "PUT /v1/guardrails/:id": { name: "probe" },
  "PUT /v1/integrations/:id": { name: "probe" },
  "PUT /v1/virtual-keys/:slug": { name: "probe" },
  "PUT /v1/model-pricing/:id": { note: "probe" },
  "PUT /v2/agent-integrations/:id": { name: "probe" },
  "POST /v1/agents/:agent": { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "probe" } },
  "PUT /v1/api-keys/:id": { name: "probe" },
  "PUT /v1/admin/workspaces/:id": { name: "probe" },
  "PUT /v2/workspaces/:id": { name: "probe" },
  "PUT /v1/admin/users/:id": { role: "member" },
  "POST /v1/admin/workspaces/:id/users": { users: [{ id: "usr_probe", role: "member" }] },
  "POST /v1/guardrails/:id/invoke": { input: "probe" },
  "PUT /v1/prompts/:id": { name: "probe" },
  "PUT /v1/prompts/:id/makeDefault": { version: 1 },
  "PUT /v1/prompts/:id/versions/:versionId": { label_id: "production" },
  "PUT /v1/prompts/partials/:id": { name: "probe" },
  "PUT /v1/prompts/partials/:id/makeDefault": { version: 1 },
  "PUT /v1/labels/:id": { description: "probe" },
  "PUT /v1/collections/:id": { name: "probe" },
  "POST /v2/prompts/:id/share": { workspace_ids: ["probe"] },
  "POST /v2/prompts/partials/:id/share": { workspace_ids: ["probe"] },
  "POST /v1/prompts/:id/render": { variables: { name: "probe" } },
  "POST /v1/prompts/:id/completions": { variables: { name: "probe" } },
  "POST /v1/prompts/:id/generate": { variables: { name: "probe" } },
  "PUT /v1/mcp-integrations/:id": { name: "probe" },
  "PUT /v1/mcp-integrations/:id/workspaces": { workspaces: [] },
  "PUT /v1/mcp-integrations/:id/capabilities": { capabilities: [] },
  "PUT /v1/mcp-servers/:id": { name: "probe" },
  "PUT /v1/mcp-servers/:id/capabilities": { capabilities: [] },
  "PUT /v1/mcp-servers/:id/user-access": { default_user_access: "allow" },
  "PUT /v1/mcp-servers/:id/tokens": { access_token: "probe-token" },
};

let gateway: TestGateway;
let agentCardServer: MockServer;
let admin: string;
/** A's resources: id, and slug where the resource has one. */
const a: Record<string, { id: string; slug?: string }> = {};
const callers: Record<string, string> = {};
/** A's own workspace key (not a caller probing A: those are B's). */
let ownKeyOfA: string;

async function make(name: string, run: () => Promise<{ status: number; body: any; text: string }>, slug = false) {
  const answer = await run();
  if (answer.status >= 300) throw new Error(`isolation: fixture '${name}' failed: ${answer.status} ${answer.text}`);
  if (slug && typeof answer.body.slug !== "string") throw new Error(`isolation: fixture '${name}' has no slug`);
  a[name] = { id: answer.body.id, ...(slug ? { slug: answer.body.slug } : {}) };
}

beforeAll(async () => {
  gateway = await startTestGateway();
  admin = gateway.adminKey;
  const wsA = await seedWorkspace(gateway, "Isolation A");
  const wsB = await seedWorkspace(gateway, "Isolation B");
  a.workspace = { id: wsA.id, slug: wsA.slug as string };
  const userA = await seedUser(gateway, "alice-a@example.com");
  await seedMember(gateway, wsA.id, userA.id, "manager");
  a.user = { id: userA.id };
  const userB = await seedUser(gateway, "bob-b@example.com");
  await seedMember(gateway, wsB.id, userB.id, "member");

  const keyA = await createKey(gateway, admin, "workspace", "service", {
    name: "a-service",
    workspace_id: wsA.id,
    scopes: ["*"],
  });
  a.key = { id: keyA.id };
  ownKeyOfA = keyA.key;
  callers.workspaceKeyB = (
    await createKey(gateway, admin, "workspace", "service", { name: "b-service", workspace_id: wsB.id, scopes: ["*"] })
  ).key;
  callers.memberKeyB = (
    await createKey(gateway, admin, "workspace", "user", {
      name: "b-member",
      workspace_id: wsB.id,
      user_id: userB.id,
      scopes: ["*"],
    })
  ).key;

  await make("log", () =>
    call(gateway, keyA.key, "POST", "/v1/logs", {
      request: { url: "https://a.example/v1/chat", body: { model: "m" } },
      response: { status: 200, body: {} },
      trace_id: "trace-of-workspace-a",
    }),
  );
  a.trace = { id: "trace-of-workspace-a" };
  await make("export", () => call(gateway, keyA.key, "POST", "/v1/logs/exports", { requested_data: ["id", "status"] }));
  await make("feedback", () => call(gateway, keyA.key, "POST", "/v1/feedback", { trace_id: a.trace!.id, value: 1 }));
  await make(
    "config",
    () =>
      call(gateway, keyA.key, "POST", "/v1/configs", {
        name: "a-config",
        slug: "a-config",
        config: { targets: [{ provider: "openai" }, { provider: "anthropic" }], strategy: { mode: "fallback" } },
      }),
    true,
  );
  await make(
    "guardrail",
    () =>
      call(gateway, keyA.key, "POST", "/v1/guardrails", {
        name: "a-guardrail",
        slug: "a-guardrail",
        checks: [{ id: "default.regexMatch", parameters: { rule: "secret-of-a" } }],
      }),
    true,
  );
  await make(
    "collection",
    () => call(gateway, keyA.key, "POST", "/v1/collections", { name: "a-collection", slug: "a-collection" }),
    true,
  );
  await make(
    "prompt",
    () =>
      call(gateway, keyA.key, "POST", "/v1/prompts", {
        name: "a-prompt",
        slug: "a-prompt",
        collection_id: a.collection!.id,
        string: "secret-of-a {{name}}",
      }),
    true,
  );
  await make(
    "partial",
    () =>
      call(gateway, keyA.key, "POST", "/v1/prompts/partials", { name: "a-partial", slug: "a-partial", string: "x" }),
    true,
  );
  await make("label", () => call(gateway, keyA.key, "POST", "/v1/labels", { name: "a-label" }), true);
  await make(
    "integration",
    () =>
      call(gateway, keyA.key, "POST", "/v1/integrations", {
        name: "a-integration",
        slug: "a-integration",
        ai_provider_id: "openai",
        key: "sk-a-secret",
      }),
    true,
  );
  await make(
    "virtualKey",
    () =>
      call(gateway, keyA.key, "POST", "/v1/virtual-keys", {
        name: "a-vk",
        slug: "a-vk",
        provider: "openai",
        key: "sk-a-vk-secret",
      }),
    true,
  );
  await make("modelPrice", () =>
    call(gateway, keyA.key, "POST", "/v1/model-pricing", {
      provider: "openai",
      model: "a-model",
      prices: { input: 1 },
    }),
  );
  // An A2A agent card for workspace A's agent integration (fetched when it is registered).
  agentCardServer = await startMockServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ name: "A's agent", url: "http://127.0.0.1:9/a2a" }));
  });
  await make(
    "agentIntegration",
    () => call(gateway, keyA.key, "POST", "/v2/agent-integrations", { name: "a-agent", url: agentCardServer.url }),
    true,
  );
  await make("usageLimit", () =>
    call(gateway, keyA.key, "POST", "/v2/policies/usage-limits", { type: "requests", credit_limit: 100 }),
  );
  await make("rateLimit", () =>
    call(gateway, keyA.key, "POST", "/v2/policies/rate-limits", { unit: "rpm", value: 100 }),
  );
  await make(
    "mcpIntegration",
    () =>
      call(gateway, keyA.key, "POST", "/v1/mcp-integrations", {
        name: "a-mcp",
        slug: "a-mcp",
        url: "http://127.0.0.1:9/mcp",
        auth_type: "headers",
        configurations: { headers: { "x-key": "secret-of-a-mcp" } },
      }),
    true,
  );
  await make(
    "mcpServer",
    () =>
      call(gateway, keyA.key, "POST", "/v1/mcp-servers", {
        name: "a-mcp-server",
        slug: "a-mcp-server",
        mcp_integration_id: a.mcpIntegration!.id,
      }),
    true,
  );
  await make("invite", () =>
    call(gateway, admin, "POST", "/v1/admin/users/invites", {
      email: "invited-a@example.com",
      workspaces: [{ id: wsA.id }],
    }),
  );
});

afterAll(async () => {
  await gateway?.close();
  await agentCardServer?.close();
});

interface Case {
  family: string;
  route: RouteSpec;
}

function controlPlaneRoutes(): Case[] {
  return ROUTE_FAMILIES.filter((family) => !INFERENCE_FAMILIES.has(family.name)).flatMap((family) =>
    family.routes.filter((route) => route.auth === "api_key").map((route) => ({ family: family.name, route })),
  );
}

/** The route's parameters, each with the path up to it (the key of PARAMETER_ROWS). */
function parametersOf(route: RouteSpec): Array<{ name: string; slot: string }> {
  const segments = route.path.split("/");
  return segments.flatMap((segment, index) =>
    segment.startsWith(":") ? [{ name: segment.slice(1), slot: segments.slice(0, index + 1).join("/") }] : [],
  );
}

/** An id shaped like `id` (same prefix and length) that names nothing. */
function unknownLike(id: string): string {
  const cut = id.lastIndexOf("_") + 1 || Math.min(6, id.length);
  let tail = "";
  while (tail.length < id.length - cut) tail += Math.random().toString(36).slice(2);
  return id.slice(0, cut) + tail.slice(0, id.length - cut);
}

type Variant = "id" | "slug";

/** The concrete path aimed at A's resources (`known`) or at unknown ones of the same shape; undefined if A's has no slug. */
function pathFor(route: RouteSpec, variant: Variant, known: boolean): string | undefined {
  let path = route.path;
  for (const { name, slot } of parametersOf(route)) {
    const fixture = PARAMETER_ROWS[slot];
    let value: string;
    if (!fixture) value = name === "type" ? "workspace" : name === "subType" ? "service" : "requests";
    else {
      const resource = a[fixture]!;
      if (variant === "slug" && !resource.slug) return undefined;
      const real = variant === "slug" ? resource.slug! : resource.id;
      value = known
        ? real
        : variant === "slug"
          ? `zz-unknown-${Math.random().toString(36).slice(2, 8)}`
          : unknownLike(real);
    }
    path = path.replace(`:${name}`, encodeURIComponent(value));
  }
  return path;
}

const withBody = (route: RouteSpec) => route.method === "POST" || route.method === "PUT" || route.method === "PATCH";

describe("workspace isolation", () => {
  it("classifies every family and every route parameter of the route table", () => {
    const families = ROUTE_FAMILIES.map((family) => family.name).filter((name) => !INFERENCE_FAMILIES.has(name));
    expect(families.filter((name) => !(name in FAMILY_ROWS))).toEqual([]);
    const unclassified = controlPlaneRoutes().flatMap(({ route }) =>
      parametersOf(route)
        .filter(({ slot }) => !(slot in PARAMETER_ROWS))
        .map(({ slot }) => `${route.method} ${route.path} (${slot})`),
    );
    expect(unclassified).toEqual([]);
    const rowFixtures = new Set(Object.values(PARAMETER_ROWS).filter((fixture): fixture is string => fixture !== null));
    const familyFixtures = Object.values(FAMILY_ROWS).flatMap((row) => (Array.isArray(row) ? row : []));
    expect([...rowFixtures].filter((fixture) => !familyFixtures.includes(fixture))).toEqual([]);
  });

  it("lists and reads without a parameter show nothing of workspace A", async () => {
    // Runs before the probes below: their own request logs (in B) carry A's ids in their paths.
    const secrets = Object.values(a).flatMap((resource) => [resource.id, resource.slug].filter(Boolean) as string[]);
    const failures: string[] = [];
    for (const callerName of Object.keys(callers)) {
      for (const { route } of controlPlaneRoutes()) {
        if (route.method !== "GET" || parametersOf(route).length > 0) continue;
        for (const url of [route.path, `${route.path}?workspace_id=${a.workspace!.id}`]) {
          const answer = await call(gateway, callers[callerName], "GET", url);
          const leaked = answer.status < 300 ? secrets.find((value) => answer.text.includes(value)) : undefined;
          if (leaked) failures.push(`${callerName}: GET ${url} -> ${answer.status} leaked A's '${leaked}'`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  for (const callerName of ["workspaceKeyB", "memberKeyB"]) {
    it(`answers ${callerName} alike for A's resources and unknown ones (by id and by slug), never with success`, async () => {
      const failures: string[] = [];
      let compared = 0;
      for (const { route } of controlPlaneRoutes()) {
        if (!parametersOf(route).some(({ slot }) => PARAMETER_ROWS[slot])) continue;
        const body = withBody(route) ? (BODIES[`${route.method} ${route.path}`] ?? {}) : undefined;
        for (const variant of ["id", "slug"] as const) {
          const aimed = pathFor(route, variant, true);
          if (!aimed) continue;
          const unknown = pathFor(route, variant, false)!;
          const atA = await call(gateway, callers[callerName], route.method, aimed, body);
          const atNothing = await call(gateway, callers[callerName], route.method, unknown, body);
          compared++;
          const label = `${route.method} ${route.path} by ${variant}`;
          if (atA.status < 300)
            failures.push(`${label}: A's resource answered ${atA.status} ${atA.text.slice(0, 160)}`);
          else if (atA.status !== atNothing.status || atA.body?.error?.code !== atNothing.body?.error?.code)
            failures.push(
              `${label}: A's -> ${atA.status} ${atA.body?.error?.code}, unknown -> ${atNothing.status} ${atNothing.body?.error?.code}`,
            );
        }
      }
      expect(compared).toBeGreaterThan(40);
      expect(failures).toEqual([]);
    });
  }

  it("answers 404 (not 403) to B for A's resources that B's own would serve", async () => {
    // The families where a workspace key reads its own workspace's resources: there, A's must be plain 404.
    const reads: Array<[string, string]> = [
      ["config", "/v1/configs/"],
      ["guardrail", "/v1/guardrails/"],
      ["prompt", "/v1/prompts/"],
      ["partial", "/v1/prompts/partials/"],
      ["label", "/v1/labels/"],
      ["collection", "/v1/collections/"],
      ["integration", "/v1/integrations/"],
      ["virtualKey", "/v1/virtual-keys/"],
      ["modelPrice", "/v1/model-pricing/"],
      ["agentIntegration", "/v2/agent-integrations/"],
      ["key", "/v1/api-keys/"],
      ["workspace", "/v1/admin/workspaces/"],
      ["log", "/v1/logs/"],
      ["export", "/v1/logs/exports/"],
      ["usageLimit", "/v2/policies/usage-limits/"],
      ["rateLimit", "/v2/policies/rate-limits/"],
      ["mcpIntegration", "/v1/mcp-integrations/"],
      ["mcpServer", "/v1/mcp-servers/"],
    ];
    const failures: string[] = [];
    for (const [fixture, base] of reads) {
      for (const ref of [a[fixture]!.id, a[fixture]!.slug].filter(Boolean) as string[]) {
        const answer = await call(gateway, callers.workspaceKeyB, "GET", `${base}${encodeURIComponent(ref)}`);
        if (answer.status !== 404) failures.push(`GET ${base}${ref} -> ${answer.status}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it("treats A's saved configs and providers as unknown on the data plane (404, like an unknown one)", async () => {
    const chat = (headers: Record<string, string>) =>
      call(
        gateway,
        callers.workspaceKeyB,
        "POST",
        "/v1/chat/completions",
        { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
        headers,
      );
    const pairs: Array<[string, Record<string, string>, Record<string, string>]> = [
      ["config by id", { "x-gateway-config": a.config!.id }, { "x-gateway-config": unknownLike(a.config!.id) }],
      ["config by slug", { "x-gateway-config": a.config!.slug! }, { "x-gateway-config": "zz-unknown-config" }],
      ["provider @slug", { "x-gateway-provider": `@${a.integration!.slug}` }, { "x-gateway-provider": "@zz-unknown" }],
      ["virtual key", { "x-gateway-virtual-key": a.virtualKey!.slug! }, { "x-gateway-virtual-key": "zz-unknown" }],
    ];
    for (const [label, aimed, unknown] of pairs) {
      const atA = await chat(aimed);
      const atNothing = await chat(unknown);
      expect(atA.status, label).toBe(404);
      expect({ status: atA.status, code: atA.body.error.code }, label).toEqual({
        status: atNothing.status,
        code: atNothing.body.error.code,
      });
    }
  });

  it("leaves workspace A's resources unchanged", async () => {
    const key = await call(gateway, admin, "GET", `/v1/api-keys/${a.key!.id}`);
    expect(key.body).toMatchObject({ status: "active", name: "a-service", workspace_id: a.workspace!.id });
    expect((await call(gateway, admin, "GET", `/v1/logs/${a.log!.id}`)).status).toBe(200);
    expect((await call(gateway, admin, "GET", `/v1/configs/${a.config!.id}`)).body).toMatchObject({ name: "a-config" });
    expect((await call(gateway, admin, "GET", `/v1/guardrails/${a.guardrail!.id}`)).body).toMatchObject({
      name: "a-guardrail",
      version: 1,
    });
    expect((await call(gateway, admin, "GET", `/v1/prompts/${a.prompt!.id}`)).body).toMatchObject({
      name: "a-prompt",
      latest_version: 1,
      labels: [],
    });
    expect((await call(gateway, admin, "GET", `/v1/prompts/partials/${a.partial!.id}`)).body.name).toBe("a-partial");
    expect((await call(gateway, admin, "GET", `/v1/labels/${a.label!.id}`)).body.description).toBeNull();
    expect((await call(gateway, admin, "GET", `/v1/collections/${a.collection!.id}`)).body.name).toBe("a-collection");
    expect((await call(gateway, admin, "GET", `/v1/integrations/${a.integration!.id}`)).body).toMatchObject({
      name: "a-integration",
    });
    expect((await call(gateway, admin, "GET", `/v1/virtual-keys/${a.virtualKey!.slug}`)).body).toMatchObject({
      name: "a-vk",
    });
    expect((await call(gateway, admin, "GET", `/v1/admin/workspaces/${a.workspace!.id}`)).body).toMatchObject({
      name: "Isolation A",
    });
    expect((await call(gateway, admin, "GET", `/v2/policies/usage-limits/${a.usageLimit!.id}`)).status).toBe(200);
  });

  it("lets B save a config under A's slug (no 409 telling B it exists); each workspace's slug names its own", async () => {
    // Runs last: from here on, B's data-plane lookups of the slug find B's own config.
    const slug = a.config!.slug!;
    const config = { provider: "openai", custom_host: "http://127.0.0.1:9/v1", api_key: "sk-b" };
    const mine = await call(gateway, callers.workspaceKeyB, "POST", "/v1/configs", { name: "b-config", slug, config });
    expect(mine.status, mine.text).toBe(201);
    expect((await call(gateway, callers.workspaceKeyB, "GET", `/v1/configs/${slug}`)).body.id).toBe(mine.body.id);
    expect((await call(gateway, ownKeyOfA, "GET", `/v1/configs/${slug}`)).body.id).toBe(a.config!.id);
    // An organisation key looks slugs up in the organisation: the first config saved under it.
    expect((await call(gateway, admin, "GET", `/v1/configs/${slug}`)).body.id).toBe(a.config!.id);
    // Taken where B sees it (its own config, an organisation-level one): 409.
    const again = await call(gateway, callers.workspaceKeyB, "POST", "/v1/configs", { name: "again", slug, config });
    expect(again.status).toBe(409);
    const shared = await call(gateway, admin, "POST", "/v1/configs", { name: "org-wide", slug: "org-wide", config });
    expect(shared.status).toBe(201);
    const hidden = await call(gateway, callers.workspaceKeyB, "POST", "/v1/configs", {
      name: "b-org-wide",
      slug: "org-wide",
      config,
    });
    expect(hidden.status).toBe(409);
    // The data plane resolves the slug in the caller's workspace: B's config (its custom host), A's for A.
    const chat = (key: string) =>
      call(
        gateway,
        key,
        "POST",
        "/v1/chat/completions",
        { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
        { "x-gateway-config": slug },
      );
    for (const key of [ownKeyOfA, callers.workspaceKeyB!]) {
      const answer = await chat(key);
      expect(answer.body.error?.code).not.toBe("config_not_found");
    }
  });
});
