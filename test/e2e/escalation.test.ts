import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createKey, seedMember, seedUser, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/**
 * Escalation matrix, table-driven: every kind of key that may create keys, holding a small scope set, tries
 * every way we know to gain more than it holds (broader keys of each kind, widening itself, taking over a
 * stronger key by update / rotate / revoke, admin-only resources). Every attempt must be refused, and must
 * leave nothing behind. Rights come from scopes (and a user's role), never from the key's type: an
 * organisation key holding `["logs.list", "api_keys.create"]` is no admin.
 * New escalation paths go in ATTEMPTS; new key kinds in CREATORS.
 */

let gateway: TestGateway;
let admin: string;
let wsA: { id: string };
let managerId: string;
let memberId: string;
/** Keys stronger than every creator: the targets of take-over attempts. */
const strong: Record<"org" | "workspace", { id: string; key: string }> = {} as never;
let integrationId: string;
/** An organisation-level guardrail: no workspace key may change it, whatever guardrail scopes it holds. */
let organisationGuardrailId: string;
/** An organisation-level label, and a prompt of another workspace (not shared): out of every workspace key's reach. */
let organisationLabelId: string;
let otherWorkspacePromptId: string;
let otherWorkspaceId: string;

interface Creator {
  name: string;
  /** Creates the key under test (with the admin key, or with another creator's key). */
  make: () => Promise<{ id: string; key: string; scopes: string[] }>;
}

const keyOf: Record<string, { id: string; key: string; scopes: string[] }> = {};

const CREATORS: Creator[] = [
  {
    name: "organisation service key [logs.list, api_keys.create] (issue 19)",
    make: async () => {
      const scopes = ["logs.list", "api_keys.create"];
      return {
        ...(await createKey(gateway, admin, "organisation", "service", { name: "limited-org", scopes })),
        scopes,
      };
    },
  },
  {
    // A key made by the limited organisation key: it can only be as limited as its creator.
    name: "organisation service key made by the limited organisation key",
    make: async () => {
      const scopes = ["logs.list", "api_keys.create"];
      const parent = keyOf["organisation service key [logs.list, api_keys.create] (issue 19)"]!;
      return {
        ...(await createKey(gateway, parent.key, "organisation", "service", { name: "child", scopes })),
        scopes,
      };
    },
  },
  {
    name: "organisation service key managing API keys only",
    make: async () => {
      const scopes = ["api_keys.create", "api_keys.read", "api_keys.list", "api_keys.update", "api_keys.delete"];
      return { ...(await createKey(gateway, admin, "organisation", "service", { name: "key-admin", scopes })), scopes };
    },
  },
  {
    name: "workspace service key [api_keys.create, api_keys.update, api_keys.delete]",
    make: async () => {
      const scopes = ["api_keys.create", "api_keys.update", "api_keys.delete"];
      const body = { name: "ws-service", workspace_id: wsA.id, scopes };
      return { ...(await createKey(gateway, admin, "workspace", "service", body)), scopes };
    },
  },
  {
    name: "workspace user key of a manager [api_keys.create, api_keys.update, configs.read]",
    make: async () => {
      const scopes = ["api_keys.create", "api_keys.update", "configs.read"];
      const body = { name: "ws-manager", workspace_id: wsA.id, user_id: managerId, scopes };
      return { ...(await createKey(gateway, admin, "workspace", "user", body)), scopes };
    },
  },
  {
    name: "workspace user key of a member [api_keys.create, api_keys.update]",
    make: async () => {
      const scopes = ["api_keys.create", "api_keys.update"];
      const body = { name: "ws-member", workspace_id: wsA.id, user_id: memberId, scopes };
      return { ...(await createKey(gateway, admin, "workspace", "user", body)), scopes };
    },
  },
  {
    // Holding the organisation_guardrails.* scopes gives a workspace key no reach beyond its workspace.
    name: "workspace service key with every guardrail scope [guardrails.*, organisation_guardrails.*, api_keys.create]",
    make: async () => {
      const scopes = [
        "api_keys.create",
        ...["create", "read", "list", "update", "delete"].flatMap((action) => [
          `guardrails.${action}`,
          `organisation_guardrails.${action}`,
        ]),
      ];
      const body = { name: "ws-guardrails", workspace_id: wsA.id, scopes };
      return { ...(await createKey(gateway, admin, "workspace", "service", body)), scopes };
    },
  },
  {
    // Every saved-prompt scope gives a workspace key no reach beyond its workspace.
    name: "workspace service key with every prompt scope [prompts.*, prompt_partials.*, labels.*, prompt_collections.*]",
    make: async () => {
      const crud = ["create", "read", "list", "update", "delete"];
      const scopes = [
        "api_keys.create",
        ...["prompts", "prompt_partials", "labels", "prompt_collections"].flatMap((resource) =>
          crud.map((action) => `${resource}.${action}`),
        ),
        "prompts.publish",
        "prompts.share",
        "prompt_partials.publish",
        "prompt_partials.share",
      ];
      const body = { name: "ws-prompts", workspace_id: wsA.id, scopes };
      return { ...(await createKey(gateway, admin, "workspace", "service", body)), scopes };
    },
  },
];

interface Attempt {
  name: string;
  run: (caller: { id: string; key: string; scopes: string[] }) => Promise<{ status: number; body: any; text: string }>;
}

const ATTEMPTS: Attempt[] = [
  {
    name: "create an organisation key with *",
    run: (c) => call(gateway, c.key, "POST", "/v1/api-keys/organisation/service", { name: "x", scopes: ["*"] }),
  },
  {
    name: "create an organisation key with a scope it lacks",
    run: (c) =>
      call(gateway, c.key, "POST", "/v1/api-keys/organisation/service", {
        name: "x",
        scopes: ["organisation_settings.read"],
      }),
  },
  {
    name: "create an organisation key through the body-typed route",
    run: (c) =>
      call(gateway, c.key, "POST", "/v1/api-keys", {
        name: "x",
        type: "organisation",
        "sub-type": "service",
        scopes: [...c.scopes, "workspaces.create"],
      }),
  },
  {
    name: "create a workspace service key with *",
    run: (c) =>
      call(gateway, c.key, "POST", "/v1/api-keys/workspace/service", {
        name: "x",
        workspace_id: wsA.id,
        scopes: ["*"],
      }),
  },
  {
    name: "create a workspace user key with a scope it lacks",
    run: (c) =>
      call(gateway, c.key, "POST", "/v1/api-keys/workspace/user", {
        name: "x",
        workspace_id: wsA.id,
        user_id: managerId,
        scopes: [...c.scopes, "integrations.update"],
      }),
  },
  {
    name: "widen its own scopes to *",
    run: (c) => call(gateway, c.key, "PUT", `/v1/api-keys/${c.id}`, { scopes: ["*"] }),
  },
  {
    name: "add one scope to itself",
    run: (c) => call(gateway, c.key, "PUT", `/v1/api-keys/${c.id}`, { scopes: [...c.scopes, "users.list"] }),
  },
  {
    name: "rotate the stronger organisation key (and get its secret)",
    run: (c) => call(gateway, c.key, "POST", `/v1/api-keys/${strong.org.id}/rotate`),
  },
  {
    name: "rotate the stronger workspace key (and get its secret)",
    run: (c) => call(gateway, c.key, "POST", `/v1/api-keys/${strong.workspace.id}/rotate`),
  },
  {
    name: "change the stronger workspace key's scopes",
    run: (c) => call(gateway, c.key, "PUT", `/v1/api-keys/${strong.workspace.id}`, { scopes: c.scopes }),
  },
  {
    name: "revoke the stronger organisation key",
    run: (c) => call(gateway, c.key, "DELETE", `/v1/api-keys/${strong.org.id}`),
  },
  {
    name: "read organisation settings",
    run: (c) => call(gateway, c.key, "GET", "/v1/admin/organisation/settings"),
  },
  {
    name: "update organisation settings",
    run: (c) => call(gateway, c.key, "PUT", "/v1/admin/organisation/settings", { block_inline_config: false }),
  },
  {
    name: "create a workspace",
    run: (c) => call(gateway, c.key, "POST", "/v1/admin/workspaces", { name: "escalated" }),
  },
  {
    name: "list users",
    run: (c) => call(gateway, c.key, "GET", "/v1/admin/users"),
  },
  {
    name: "create an organisation-level guardrail",
    run: (c) =>
      call(gateway, c.key, "POST", "/v1/guardrails", {
        name: "escalated",
        organisation_id: gateway.gateway.bootstrap.organisationId,
        checks: [{ id: "default.regexMatch", parameters: { rule: "x" } }],
      }),
  },
  {
    name: "change an organisation-level guardrail",
    run: (c) =>
      call(gateway, c.key, "PUT", `/v1/guardrails/${organisationGuardrailId}`, {
        actions: { deny: false, async: true },
      }),
  },
  {
    name: "delete an organisation-level guardrail",
    run: (c) => call(gateway, c.key, "DELETE", `/v1/guardrails/${organisationGuardrailId}`),
  },
  {
    name: "make a guardrail an organisation default",
    run: (c) =>
      call(gateway, c.key, "PUT", "/v1/admin/organisation/defaults", { input_guardrails: [organisationGuardrailId] }),
  },
  {
    name: "create an organisation-level label",
    run: (c) =>
      call(gateway, c.key, "POST", "/v1/labels", {
        name: "escalated-label",
        organisation_id: gateway.gateway.bootstrap.organisationId,
      }),
  },
  {
    name: "rename an organisation-level label",
    run: (c) => call(gateway, c.key, "PUT", `/v1/labels/${organisationLabelId}`, { name: "taken-over" }),
  },
  {
    name: "delete the default label production",
    run: (c) => call(gateway, c.key, "DELETE", "/v1/labels/production"),
  },
  {
    name: "share another workspace's prompt with its own workspace",
    run: (c) =>
      call(gateway, c.key, "POST", `/v2/prompts/${otherWorkspacePromptId}/share`, { workspace_ids: [wsA.id] }),
  },
  {
    name: "fork another workspace's prompt that is not shared with it",
    run: (c) => call(gateway, c.key, "POST", `/v2/prompts/${otherWorkspacePromptId}/fork`, { workspace_id: wsA.id }),
  },
  {
    name: "publish another workspace's prompt",
    run: (c) => call(gateway, c.key, "PUT", `/v1/prompts/${otherWorkspacePromptId}/makeDefault`, { version: 1 }),
  },
  {
    name: "share an organisation integration with a workspace",
    run: (c) =>
      call(gateway, c.key, "PUT", `/v1/integrations/${integrationId}/workspaces`, { workspace_ids: [wsA.id] }),
  },
];

beforeAll(async () => {
  gateway = await startTestGateway();
  admin = gateway.adminKey;
  wsA = await seedWorkspace(gateway, "Escalation A");
  const manager = await seedUser(gateway, "esc-manager@example.com", "owner");
  const member = await seedUser(gateway, "esc-member@example.com");
  await seedMember(gateway, wsA.id, manager.id, "manager");
  await seedMember(gateway, wsA.id, member.id, "member");
  managerId = manager.id;
  memberId = member.id;
  strong.org = await createKey(gateway, admin, "organisation", "service", { name: "strong-org", scopes: ["*"] });
  strong.workspace = await createKey(gateway, admin, "workspace", "service", {
    name: "strong-ws",
    workspace_id: wsA.id,
    scopes: ["*"],
  });
  const integration = await call(gateway, admin, "POST", "/v1/integrations", {
    name: "org-wide",
    slug: "esc-org-wide",
    ai_provider_id: "openai",
    key: "sk-escalation",
  });
  expect(integration.status).toBe(201);
  integrationId = integration.body.id;
  const guardrail = await call(gateway, admin, "POST", "/v1/guardrails", {
    name: "org-wide guardrail",
    checks: [{ id: "default.regexMatch", parameters: { rule: "\\d{16}" } }],
    actions: { deny: true },
  });
  expect(guardrail.status).toBe(201);
  organisationGuardrailId = guardrail.body.id;
  const label = await call(gateway, admin, "POST", "/v1/labels", { name: "org-label" });
  expect(label.status).toBe(201);
  organisationLabelId = label.body.id;
  otherWorkspaceId = (await seedWorkspace(gateway, "Escalation other")).id;
  const prompt = await call(gateway, admin, "POST", "/v1/prompts", {
    name: "other's prompt",
    workspace_id: otherWorkspaceId,
    string: "Hello {{name}}",
  });
  expect(prompt.status).toBe(201);
  otherWorkspacePromptId = prompt.body.id;
  for (const creator of CREATORS) keyOf[creator.name] = await creator.make();
});

afterAll(async () => {
  await gateway?.close();
});

describe("escalation matrix", () => {
  it("a creator may still grant what it holds (the matrix refuses escalation, not use)", async () => {
    const limited = keyOf[CREATORS[0]!.name]!;
    const child = await call(gateway, limited.key, "POST", "/v1/api-keys/organisation/service", {
      name: "subset",
      scopes: ["logs.list"],
    });
    expect(child.status).toBe(201);
    expect(child.body.scopes).toEqual(["logs.list"]);
    expect((await call(gateway, child.body.key, "GET", "/v1/logs")).status).toBe(200);
    expect((await call(gateway, child.body.key, "GET", "/v1/admin/organisation/settings")).status).toBe(403);
    const manager = keyOf[CREATORS[4]!.name]!;
    const ws = await call(gateway, manager.key, "POST", "/v1/api-keys/workspace/service", {
      name: "subset-ws",
      workspace_id: wsA.id,
      scopes: ["configs.read"],
    });
    expect(ws.status).toBe(201);
  });

  for (const creator of CREATORS) {
    it(`refuses every escalation of: ${creator.name}`, async () => {
      const caller = keyOf[creator.name]!;
      const failures: string[] = [];
      for (const attempt of ATTEMPTS) {
        const answer = await attempt.run(caller);
        if (answer.status !== 403 && answer.status !== 404)
          failures.push(`${attempt.name}: ${answer.status} ${answer.text.slice(0, 200)}`);
        else if (answer.body?.key || answer.body?.id) failures.push(`${attempt.name}: answered a resource`);
      }
      expect(failures).toEqual([]);
      // Nothing changed: the caller's own key is as it was.
      const own = await call(gateway, admin, "GET", `/v1/api-keys/${caller.id}`);
      expect(own.body).toMatchObject({ status: "active", scopes: caller.scopes });
    });
  }

  it("leaves the stronger keys as they were, and working", async () => {
    for (const target of [strong.org, strong.workspace]) {
      const key = await call(gateway, admin, "GET", `/v1/api-keys/${target.id}`);
      expect(key.body).toMatchObject({ status: "active", scopes: ["*"] });
      expect(key.body.last_rotated_at).toBeNull();
      expect((await call(gateway, target.key, "GET", "/v1/configs")).status).toBe(200);
    }
    const integration = await call(gateway, admin, "GET", `/v1/integrations/${integrationId}/workspaces`);
    expect(integration.body.total).toBe(0);
    const guardrail = await call(gateway, admin, "GET", `/v1/guardrails/${organisationGuardrailId}`);
    expect(guardrail.body).toMatchObject({ version: 1, actions: { deny: true, async: false } });
    const guardrails = await call(gateway, admin, "GET", "/v1/guardrails?limit=100");
    expect(guardrails.body.data.map((item: any) => item.name)).toEqual(["org-wide guardrail"]);
    expect((await call(gateway, admin, "GET", "/v1/admin/organisation/defaults")).body.input_guardrails).toEqual([]);
    expect((await call(gateway, admin, "GET", `/v1/labels/${organisationLabelId}`)).body.name).toBe("org-label");
    expect((await call(gateway, admin, "GET", "/v1/labels/production")).status).toBe(200);
    const prompt = await call(gateway, admin, "GET", `/v1/prompts/${otherWorkspacePromptId}?show_prompt_share=true`);
    expect(prompt.body).toMatchObject({ workspace_id: otherWorkspaceId, labels: [] });
    const prompts = await call(gateway, admin, "GET", "/v1/prompts?show_prompt_share=true");
    expect(prompts.body.data.map((item: any) => [item.name, item.shared_with])).toEqual([["other's prompt", []]]);
    // No key holding more than its creator was made: every key but the admin's and the strong ones is narrow.
    const keys = await call(gateway, admin, "GET", "/v1/api-keys?limit=100");
    const wide = keys.body.data.filter((key: any) => key.scopes.includes("*")).map((key: any) => key.name);
    expect(wide.sort()).toEqual(["Bootstrap admin key", "strong-org", "strong-ws"].sort());
  });
});
