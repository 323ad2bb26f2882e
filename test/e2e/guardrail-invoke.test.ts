import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GuardrailResource, guardrailStore } from "../../core/control/guardrails/store.ts";
import { DEFAULT_CHECK_TIMEOUT_MS, type GuardrailActions } from "../../core/inference/guardrails/types.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/**
 * `POST /v1/guardrails/:id/invoke` against the real local gateway: a saved guardrail's checks over a text or
 * chat messages, by id or slug, within the caller's workspace, with the scope, and bad input answered 400.
 * Guardrails are written through the store (their CRUD routes are another family's).
 */

let gateway: TestGateway;
let organisationId: string;
let workspaceA: string;
let workspaceB: string;
let keyA: string;
let keyB: string;
let cards: GuardrailResource;
let ofWorkspaceA: GuardrailResource;

const actions = (overrides: Partial<GuardrailActions> = {}): GuardrailActions => ({
  deny: true,
  async: false,
  soft_deny_200: false,
  on_error: "open",
  timeout_ms: DEFAULT_CHECK_TIMEOUT_MS,
  ...overrides,
});

/** Passes when the text holds no 16-digit card number. */
const noCardNumbers = { id: "default.regexMatch", parameters: { rule: "\\b\\d{4}([ -]?\\d{4}){3}\\b", not: true } };

async function save(fields: Partial<GuardrailResource>): Promise<GuardrailResource> {
  return guardrailStore(gateway.gateway.services.stores.records).create(organisationId, {
    name: "Guardrail",
    slug: `gr-${Math.random().toString(36).slice(2, 10)}`,
    checks: [noCardNumbers],
    actions: actions(),
    status: "active",
    ...fields,
  });
}

const invoke = (id: string, body: unknown, key = gateway.adminKey) =>
  call(gateway, key, "POST", `/v1/guardrails/${encodeURIComponent(id)}/invoke`, body);

beforeAll(async () => {
  gateway = await startTestGateway();
  organisationId = gateway.gateway.bootstrap.organisationId;
  workspaceA = (await seedWorkspace(gateway, "Invoke A")).id;
  workspaceB = (await seedWorkspace(gateway, "Invoke B")).id;
  const scopes = ["guardrails.invoke"];
  keyA = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", { name: "a", workspace_id: workspaceA, scopes })
  ).key;
  keyB = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", { name: "b", workspace_id: workspaceB, scopes })
  ).key;
  cards = await save({ name: "No card numbers", slug: "no-card-numbers" });
  ofWorkspaceA = await save({ name: "A's", workspaceId: workspaceA });
});

afterAll(async () => {
  await gateway?.close();
});

describe("POST /v1/guardrails/:id/invoke", () => {
  it("judges a text: a failed deny guardrail is denied, with each check's verdict and explanation", async () => {
    const failed = await invoke(cards.id, { input: "my card is 4242 4242 4242 4242, charge it" });
    expect(failed.status).toBe(200);
    expect(failed.body).toEqual({
      object: "guardrail.invocation",
      guardrail_id: cards.id,
      phase: "input",
      verdict: false,
      denied: true,
      checks: [
        {
          id: "default.regexMatch",
          verdict: false,
          explanation: expect.stringContaining("must not"),
          data: { match_start: 11, match_length: 19 },
          transformed: false,
          execution_time_ms: expect.any(Number),
        },
      ],
    });

    const passed = await invoke(cards.slug!, { input: "no numbers here", phase: "output", model: "gpt-4o" });
    expect(passed.body).toMatchObject({ guardrail_id: cards.id, phase: "output", verdict: true, denied: false });
  });

  it("judges chat messages: on input the last message's text, on output the last message as the answer", async () => {
    const messages = [
      { role: "system", content: "You are terse." },
      { role: "user", content: [{ type: "text", text: "card 4111-1111-1111-1111" }] },
      { role: "assistant", content: "I cannot store that." },
    ];
    // The regex check judges the text of the last message (the answer on output, the last turn on input).
    expect((await invoke(cards.id, { input: messages })).body).toMatchObject({ verdict: true });
    expect((await invoke(cards.id, { input: messages.slice(0, 2) })).body).toMatchObject({ verdict: false });
    expect((await invoke(cards.id, { input: messages, phase: "output" })).body).toMatchObject({
      phase: "output",
      verdict: true,
    });
  });

  it("reports a failure that does not deny, runs async guardrails too, and follows on_error", async () => {
    const logOnly = await save({ actions: actions({ deny: false, async: true }) });
    expect((await invoke(logOnly.id, { input: "4242424242424242" })).body).toMatchObject({
      verdict: false,
      denied: false,
    });
    const broken = await save({
      checks: [{ id: "default.noSuchCheck", parameters: {} }],
      actions: actions({ on_error: "closed" }),
    });
    const answer = await invoke(broken.id, { input: "anything" });
    expect(answer.body).toMatchObject({
      verdict: false,
      denied: true,
      checks: [{ id: "default.noSuchCheck", verdict: false, error: "unknown check 'default.noSuchCheck'" }],
    });
  });

  it("keeps workspaces apart: another workspace's guardrail answers 404 like an unknown one", async () => {
    expect((await invoke(ofWorkspaceA.id, { input: "x" }, keyA)).status).toBe(200);
    expect((await invoke(cards.id, { input: "x" }, keyA)).status).toBe(200);
    for (const id of [ofWorkspaceA.id, ofWorkspaceA.slug!, "gr_unknown0000000000", "unknown-slug"]) {
      const answer = await invoke(id, { input: "x" }, keyB);
      expect(answer.status, id).toBe(404);
      expect(answer.body.error).toMatchObject({ type: "not_found_error", code: "guardrail_not_found" });
    }
    const archived = await save({ status: "archived" });
    expect((await invoke(archived.id, { input: "x" })).status).toBe(404);
  });

  it("needs the guardrails.invoke scope", async () => {
    const { key } = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "no-invoke",
      workspace_id: workspaceA,
      scopes: ["logs.list"],
    });
    const answer = await invoke(cards.id, { input: "x" }, key);
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({ type: "permission_error" });
  });

  it.each([
    ["no input", {}, "input"],
    ["an empty message list", { input: [] }, "input"],
    ["a message without role", { input: [{ content: "hi" }] }, "input"],
    ["an unknown phase", { input: "x", phase: "middle" }, "phase"],
    ["an unknown field", { input: "x", inputs: "y" }, null],
    [
      "too many metadata pairs",
      { input: "x", metadata: Object.fromEntries([...Array(17)].map((_, i) => [`k${i}`, "v"])) },
      "metadata",
    ],
  ])("answers 400 in OpenAI's shape for %s", async (_what, body, param) => {
    const answer = await invoke(cards.id, body);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ type: "invalid_request_error", message: expect.any(String) });
    if (param) expect(answer.body.error.param).toBe(param);
  });

  it("logs the invocation as a request", async () => {
    const traceId = `trace-invoke-${Date.now()}`;
    const answer = await call(
      gateway,
      gateway.adminKey,
      "POST",
      `/v1/guardrails/${cards.id}/invoke`,
      { input: "x" },
      {
        "x-gateway-trace-id": traceId,
      },
    );
    expect(answer.status).toBe(200);
    await expect
      .poll(
        async () => {
          const logs = await call(gateway, gateway.adminKey, "GET", `/v1/logs/traces/${traceId}`);
          return JSON.stringify(logs.body);
        },
        { timeout: 5_000 },
      )
      .toContain(`/v1/guardrails/${cards.id}/invoke`);
  });
});
