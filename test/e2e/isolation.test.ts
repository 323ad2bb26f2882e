import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTE_FAMILIES, type RouteSpec } from "../../core/routes/table.ts";
import { call, createKey, seedMember, seedUser, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/**
 * Workspace isolation, table-driven: every authenticated control-plane route of the route table (read at run
 * time, so routes added later are covered) is called with a workspace key of workspace B and with a
 * member-role user key of B, aimed at workspace A's resources. Routes with a path parameter get A's fixture
 * where one is known (else a random id) and must answer 403/404; routes without one may answer 2xx only
 * without any of A's data. Finally A's resources must be unchanged.
 */

const INFERENCE_FAMILIES = new Set(["chat", "completions", "embeddings", "models", "passthrough"]);

let gateway: TestGateway;
let admin: string;
const a: Record<string, string> = {};
const callers: Record<string, string> = {};

/** Per family, per path parameter: A's resource to aim at. Families without an entry get random ids. */
const FIXTURES: Record<string, Record<string, () => string | undefined>> = {
  "api-keys": { id: () => a.key },
  logs: { id: () => a.log },
  configs: { id: () => a.config },
  integrations: { id: () => a.integration },
  "virtual-keys": { slug: () => a.virtualKey, id: () => a.virtualKey },
  workspaces: { id: () => a.workspace, workspaceId: () => a.workspace, userId: () => a.user },
  users: { id: () => a.user, userId: () => a.user },
};

/** Request bodies that would be valid for a route, so a 403/404 proves isolation rather than validation. */
const BODIES: Record<string, () => unknown> = {
  "PUT /v1/integrations/:id/models": () => ({ allow_all_models: false, models: [] }),
  "PUT /v1/integrations/:id/integration-models": () => ({ allow_all_models: false, models: [] }),
  "PUT /v1/admin/workspaces/:id/users/:userId": () => ({ role: "manager" }),
};

async function fixture(
  name: string,
  run: () => Promise<{ status: number; body: any; text: string }>,
  pick: (body: any) => string,
) {
  const answer = await run();
  if (answer.status >= 300) {
    console.warn(
      `isolation: no fixture '${name}' (${answer.status} ${answer.text.slice(0, 200)}); its routes get random ids`,
    );
    return;
  }
  a[name] = pick(answer.body);
}

beforeAll(async () => {
  gateway = await startTestGateway();
  admin = gateway.adminKey;
  const wsA = await seedWorkspace(gateway, "Isolation A");
  const wsB = await seedWorkspace(gateway, "Isolation B");
  a.workspace = wsA.id;
  const userA = await seedUser(gateway, "alice-a@example.com");
  await seedMember(gateway, wsA.id, userA.id, "manager");
  a.user = userA.id;
  const userB = await seedUser(gateway, "bob-b@example.com");
  await seedMember(gateway, wsB.id, userB.id, "member");

  a.key = (
    await createKey(gateway, admin, "workspace", "service", { name: "a-service", workspace_id: wsA.id, scopes: ["*"] })
  ).id;
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

  await fixture(
    "log",
    () =>
      call(gateway, admin, "POST", "/v1/logs", {
        workspace_id: wsA.id,
        request: { url: "https://a.example/v1/chat", body: { model: "m" } },
        response: { status: 200, body: {} },
      }),
    (body) => body.id,
  );
  await fixture(
    "config",
    () =>
      call(gateway, admin, "POST", "/v1/configs", {
        name: "a-config",
        workspace_id: wsA.id,
        config: {
          retry: { attempts: 2 },
          targets: [{ provider: "openai" }, { provider: "anthropic" }],
          strategy: { mode: "fallback" },
        },
      }),
    (body) => body.id,
  );
  await fixture(
    "integration",
    () =>
      call(gateway, admin, "POST", "/v1/integrations", {
        name: "a-integration",
        slug: "a-integration",
        ai_provider_id: "openai",
        key: "sk-a-secret",
        workspace_id: wsA.id,
      }),
    (body) => body.id,
  );
  await fixture(
    "virtualKey",
    () =>
      call(gateway, admin, "POST", "/v1/virtual-keys", {
        name: "a-vk",
        slug: "a-vk",
        provider: "openai",
        key: "sk-a-vk-secret",
        workspace_id: wsA.id,
      }),
    (body) => body.slug ?? body.id,
  );
});

afterAll(async () => {
  await gateway?.close();
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

/** The path with A's fixtures (or random ids); `aimed` tells whether any parameter names one of A's resources. */
function concretePath({ family, route }: Case): { path: string; aimed: boolean; hasParams: boolean } {
  let aimed = false;
  let hasParams = false;
  const path = route.path
    .split("/")
    .map((segment) => {
      if (segment === "*") {
        hasParams = true;
        return `x_${Math.random().toString(36).slice(2, 10)}`;
      }
      if (!segment.startsWith(":")) return segment;
      hasParams = true;
      const value = FIXTURES[family]?.[segment.slice(1)]?.();
      if (value) {
        aimed = true;
        return encodeURIComponent(value);
      }
      return `x_${Math.random().toString(36).slice(2, 10)}`;
    })
    .join("/");
  return { path, aimed, hasParams };
}

describe("workspace isolation", () => {
  it("covers the control plane of the route table", () => {
    const cases = controlPlaneRoutes();
    expect(cases.length).toBeGreaterThan(10);
    expect(cases.some(({ family }) => family === "api-keys")).toBe(true);
  });

  it("lists and reads without a parameter show nothing of workspace A", async () => {
    // Runs before the probes below: their own request logs (in B) carry A's ids in their paths.
    const failures: string[] = [];
    for (const callerName of ["workspaceKeyB", "memberKeyB"]) {
      for (const testCase of controlPlaneRoutes()) {
        const { route } = testCase;
        const { path, hasParams } = concretePath(testCase);
        if (route.method !== "GET" || hasParams) continue;
        for (const url of [path, `${path}?workspace_id=${a.workspace}`]) {
          const answer = await call(gateway, callers[callerName], "GET", url);
          const leaked =
            answer.status < 300 ? Object.values(a).find((value) => answer.text.includes(value)) : undefined;
          if (leaked) failures.push(`${callerName}: GET ${url} -> ${answer.status} leaked A's '${leaked}'`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  for (const callerName of ["workspaceKeyB", "memberKeyB"]) {
    it(`nothing of workspace A is visible to or changeable by ${callerName}`, async () => {
      const failures: string[] = [];
      for (const testCase of controlPlaneRoutes()) {
        const { route } = testCase;
        const { path, aimed, hasParams } = concretePath(testCase);
        if (route.method === "GET" && !hasParams) continue;
        const withBody = route.method === "POST" || route.method === "PUT" || route.method === "PATCH";
        const preset = BODIES[`${route.method} ${route.path}`];
        const body = withBody
          ? preset
            ? preset()
            : hasParams
              ? { name: "isolation-probe" }
              : { name: "isolation-probe", workspace_id: a.workspace }
          : undefined;
        const answer = await call(gateway, callers[callerName], route.method, path, body);
        const label = `${route.method} ${route.path} -> ${answer.status}`;
        if (aimed) {
          if (answer.status !== 403 && answer.status !== 404)
            failures.push(`${label} (aimed at A's resource; expected 403/404) ${answer.text.slice(0, 160)}`);
        } else if (hasParams) {
          if (![400, 403, 404].includes(answer.status))
            failures.push(`${label} (random id; expected 400/403/404) ${answer.text.slice(0, 160)}`);
        } else if (answer.status < 300) {
          // A write without a parameter, naming workspace A in its body: it must not have acted on A.
          const leaked = Object.values(a).find((value) => answer.text.includes(value));
          if (leaked) failures.push(`${label} acted on or leaked A's '${leaked}'`);
        }
      }
      expect(failures).toEqual([]);
    });
  }

  it("leaves workspace A's resources unchanged", async () => {
    const key = await call(gateway, admin, "GET", `/v1/api-keys/${a.key}`);
    expect(key.body).toMatchObject({ status: "active", name: "a-service", workspace_id: a.workspace });
    if (a.log) expect((await call(gateway, admin, "GET", `/v1/logs/${a.log}`)).status).toBe(200);
    if (a.config)
      expect((await call(gateway, admin, "GET", `/v1/configs/${a.config}`)).body).toMatchObject({ name: "a-config" });
    if (a.integration)
      expect((await call(gateway, admin, "GET", `/v1/integrations/${a.integration}`)).body).toMatchObject({
        name: "a-integration",
      });
    if (a.virtualKey) expect((await call(gateway, admin, "GET", `/v1/virtual-keys/${a.virtualKey}`)).status).toBe(200);
  });
});
