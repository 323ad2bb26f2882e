import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { seedLabel, seedPartial, seedPrompt } from "../helpers/prompts.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Saved prompts at run time (docs/prompts.md) with the portkey-ai SDK, unmodified: `prompts.render` and
 * `prompts.completions.create` (streamed and not) against the local gateway; the mock upstream records what
 * the provider received. Prompts are written straight through the stores (the control routes are tested apart).
 */

const REPLY = "Tides follow the moon.";
const PROVIDER_KEY = "sk-prompt-provider-0123456789";

let gateway: TestGateway;
let upstream: OpenAIMock;
let portkey: Portkey;
let records: TestGateway["gateway"]["services"]["stores"]["records"];
let owner: { organisationId: string; workspaceId: string };
let chatPrompt: { id: string; slug?: string };
let textPrompt: { id: string };
let label: { id: string; name: string };

const SYSTEM = "You are a {{tone}} tutor.{{#formal}} Address the student formally.{{/formal}}";

beforeAll(async () => {
  [gateway, upstream] = await Promise.all([startTestGateway(), startOpenAIMock({ reply: REPLY })]);
  records = gateway.gateway.services.stores.records;
  owner = {
    organisationId: gateway.gateway.bootstrap.organisationId,
    workspaceId: gateway.gateway.bootstrap.defaultWorkspaceId,
  };
  const integration = await call(gateway, gateway.adminKey, "POST", "/v1/integrations", {
    name: "Prompts OpenAI",
    slug: "prompts-openai",
    ai_provider_id: "openai",
    key: PROVIDER_KEY,
    configurations: { custom_host: `${upstream.url}/v1` },
  });
  expect(integration.status).toBe(201);
  await seedPartial(records, owner, "sign-off", "Finish with: {{closing}}");
  label = await seedLabel(records, owner, "production");
  const messages = (question: string) =>
    JSON.stringify([
      { role: "system", content: SYSTEM },
      { role: "user", content: `${question}\n{{> sign-off}}` },
    ]);
  chatPrompt = await seedPrompt(records, owner, {
    slug: "tutor",
    versions: [
      { string: messages("Old: {{question}}"), model: "gpt-4o-mini", virtual_key: "prompts-openai" },
      {
        string: messages("Explain {{question}}"),
        model: "gpt-4o-mini",
        virtual_key: "@prompts-openai",
        parameters: { temperature: 0.7, max_tokens: 200 },
      },
      { string: messages("Newest: {{question}}"), model: "gpt-4o", virtual_key: "prompts-openai" },
    ],
    defaultVersion: 2,
    labels: { [label.id]: 1 },
  });
  textPrompt = await seedPrompt(records, owner, {
    slug: "haiku",
    versions: [
      {
        string: "Write a haiku about {{subject}}.",
        model: "gpt-3.5-turbo-instruct",
        virtual_key: "prompts-openai",
        parameters: { max_tokens: 60 },
      },
    ],
  });
  portkey = new Portkey({ apiKey: gateway.adminKey, baseURL: `${gateway.url}/v1` });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

beforeEach(() => upstream.reset());

const variables = { tone: "patient", question: "the tides", closing: "Any questions?" };
const sentToProvider = () => upstream.lastRequest()!.json();

/** What the SDK threw: its HTTP status and the OpenAI-shaped error. */
async function sdkError(promise: Promise<unknown>): Promise<{ status: number; error: any }> {
  const error: any = await promise.then(
    () => expect.fail("expected the SDK call to fail"),
    (failure: unknown) => failure,
  );
  return { status: error.status, error: error.error?.error ?? error.error };
}

/** A request's log, once written (found by its trace id). */
async function logOf(traceId: string): Promise<any> {
  let found: any;
  await expect
    .poll(
      async () => {
        const list = await call(gateway, gateway.adminKey, "GET", `/v1/logs?trace_id=${traceId}`);
        found = list.body.data?.[0];
        return found !== undefined;
      },
      { timeout: 5_000 },
    )
    .toBe(true);
  return (await call(gateway, gateway.adminKey, "GET", `/v1/logs/${found.id}`)).body;
}

describe("render", () => {
  it("answers the filled request of the published version without calling a model", async () => {
    const rendered: any = await portkey.prompts.render({ promptID: chatPrompt.id, variables, temperature: 0.1 });
    expect(rendered.success).toBe(true);
    expect(rendered.data).toEqual({
      model: "gpt-4o-mini",
      temperature: 0.1,
      max_completion_tokens: 200,
      messages: [
        { role: "system", content: "You are a patient tutor." },
        { role: "user", content: "Explain the tides\nFinish with: Any questions?" },
      ],
    });
    expect(upstream.requests).toHaveLength(0);
  });

  it("selects versions by suffix: @latest, @n, @label", async () => {
    const contentOf = async (promptID: string) =>
      ((await portkey.prompts.render({ promptID, variables })) as any).data.messages[1].content as string;
    expect(await contentOf(`${chatPrompt.slug}@latest`)).toMatch(/^Newest: the tides/);
    expect(await contentOf(`${chatPrompt.id}@2`)).toMatch(/^Explain the tides/);
    expect(await contentOf(`${chatPrompt.id}@production`)).toMatch(/^Old: the tides/);
    // A client that encodes the suffix: `%40` is `@`; a malformed escape is a clean 4xx.
    const encoded = await call(gateway, gateway.adminKey, "POST", `/v1/prompts/${chatPrompt.id}%40latest/render`, {
      variables,
    });
    expect(encoded.body.data.model).toBe("gpt-4o");
    const malformed = await call(gateway, gateway.adminKey, "POST", `/v1/prompts/${chatPrompt.id}%E0%A4%A/render`, {
      variables,
    });
    expect(malformed.status).toBe(404);
  });

  it("answers 400 naming a missing variable, 404 for an unknown prompt, version or label", async () => {
    const missing = await sdkError(
      portkey.prompts.render({ promptID: chatPrompt.id, variables: { tone: "patient", question: "x" } }),
    );
    expect(missing.status).toBe(400);
    expect(missing.error).toMatchObject({ param: "variables.closing", code: "missing_variable" });
    for (const [promptID, code] of [
      ["pp_unknown", "prompt_not_found"],
      [`${chatPrompt.id}@42`, "version_not_found"],
      [`${chatPrompt.id}@staging`, "label_not_found"],
    ]) {
      const failure = await sdkError(portkey.prompts.render({ promptID: promptID!, variables }));
      expect(failure.status).toBe(404);
      expect(failure.error.code).toBe(code);
    }
  });
});

describe("completions", () => {
  it("runs the rendered chat request through the prompt's saved provider, the body's hyperparameters winning", async () => {
    const traceID = `prompt-run-${Date.now()}`;
    const client = new Portkey({
      apiKey: gateway.adminKey,
      baseURL: `${gateway.url}/v1`,
      traceID,
      metadata: { team: "learning", _prompt: "spoofed" },
    });
    const answer: any = await client.prompts.completions.create({
      promptID: `${chatPrompt.id}@production`,
      variables: { ...variables, formal: "yes", question: 'the "tides"' },
      max_tokens: 64,
      temperature: 0.2,
    });
    // The provider's chat completion object, as /v1/chat/completions answers it.
    expect(answer.object).toBe("chat.completion");
    expect(answer.choices[0].message.content).toBe(REPLY);
    const request = upstream.lastRequest()!;
    expect(request.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    expect(sentToProvider()).toMatchObject({
      model: "gpt-4o-mini",
      temperature: 0.2,
      max_completion_tokens: 64,
      messages: [
        { role: "system", content: "You are a patient tutor. Address the student formally." },
        { role: "user", content: 'Old: the "tides"\nFinish with: Any questions?' },
      ],
    });
    expect(sentToProvider()).not.toHaveProperty("max_tokens");

    const log = await logOf(traceID);
    expect(log.metadata).toMatchObject({
      _prompt: chatPrompt.id,
      _prompt_version: "1",
      _prompt_label: "production",
      team: "learning",
    });
    expect(log.route ?? log.path).toContain("/v1/prompts/");
  });

  it("streams a chat completion", async () => {
    const stream: any = await portkey.prompts.completions.create({ promptID: chatPrompt.id, variables, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices?.[0]?.delta?.content ?? "";
    expect(text).toBe(REPLY);
    expect(sentToProvider()).toMatchObject({ stream: true, max_completion_tokens: 200, temperature: 0.7 });
  });

  it("answers a text template with the text completion shape, streamed and not", async () => {
    const answer: any = await portkey.prompts.completions.create({
      promptID: textPrompt.id,
      variables: { subject: "autumn" },
    });
    expect(answer.object).toBe("text_completion");
    expect(typeof answer.choices[0].text).toBe("string");
    expect(upstream.lastRequest()!.path).toMatch(/\/v1\/completions$/);
    expect(sentToProvider()).toMatchObject({ prompt: "Write a haiku about autumn.", max_tokens: 60 });
    const stream: any = await portkey.prompts.completions.create({
      promptID: textPrompt.id,
      variables: { subject: "autumn" },
      stream: true,
    });
    let chunks = 0;
    for await (const chunk of stream) if (typeof chunk.choices?.[0]?.text === "string") chunks++;
    expect(chunks).toBeGreaterThan(0);
  });

  it("answers 400 for a missing or non-string variable and 404 for an unknown prompt, calling no provider", async () => {
    const missing = await sdkError(
      portkey.prompts.completions.create({ promptID: chatPrompt.id, variables: { tone: "x", closing: "y" } }),
    );
    expect(missing.status).toBe(400);
    expect(missing.error.param).toBe("variables.question");
    const object = await sdkError(
      portkey.prompts.completions.create({ promptID: chatPrompt.id, variables: { ...variables, question: { a: 1 } } }),
    );
    expect(object.status).toBe(400);
    expect(object.error.param).toBe("variables.question");
    const unknown = await sdkError(portkey.prompts.completions.create({ promptID: "pp_nothing_here", variables }));
    expect(unknown.status).toBe(404);
    expect(upstream.requests).toHaveLength(0);
  });

  it("is never forwarded raw to a provider, even with provider headers", async () => {
    const answer = await call(
      gateway,
      gateway.adminKey,
      "POST",
      "/v1/prompts/pp_not_a_prompt/completions",
      { variables: {} },
      { "x-gateway-provider": "openai", "x-gateway-custom-host": `${upstream.url}/v1`, authorization: "Bearer sk-x" },
    );
    expect(answer.status).toBe(404);
    expect(answer.body.error.code).toBe("prompt_not_found");
    // Other paths under /v1/prompts are the gateway's too: 404 or 405, not the provider's answer.
    const headers = {
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${upstream.url}/v1`,
      authorization: "Bearer sk-x",
    };
    const other = await call(gateway, gateway.adminKey, "POST", `/v1/prompts/${chatPrompt.id}/unknown`, {}, headers);
    expect(other.status).toBe(404);
    const wrongMethod = await call(
      gateway,
      gateway.adminKey,
      "GET",
      `/v1/prompts/${chatPrompt.id}/completions`,
      undefined,
      headers,
    );
    expect(wrongMethod.status).toBe(405);
    expect(upstream.requests).toHaveLength(0);
  });

  it("applies a config's guardrail: the request's config wins over the prompt's provider", async () => {
    const config = {
      provider: "@prompts-openai",
      input_guardrails: [{ "default.regexMatch": { rule: "(?i)password", not: true }, deny: true }],
    };
    const guarded = new Portkey({ apiKey: gateway.adminKey, baseURL: `${gateway.url}/v1`, config });
    const denied = await sdkError(
      guarded.prompts.completions.create({
        promptID: chatPrompt.id,
        variables: { ...variables, question: "the admin password" },
      }),
    );
    expect(denied.status).toBe(446);
    expect(upstream.requests).toHaveLength(0);
    const allowed: any = await guarded.prompts.completions.create({ promptID: chatPrompt.id, variables });
    expect(allowed.choices[0].message.content).toBe(REPLY);
  });

  it("the legacy /generate answers {success, data} with the completion", async () => {
    const answer = await call(gateway, gateway.adminKey, "POST", `/v1/prompts/${chatPrompt.id}/generate`, {
      variables,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.success).toBe(true);
    expect(answer.body.data.choices[0].message.content).toBe(REPLY);
  });

  it("analytics group runs by prompt", async () => {
    await portkey.prompts.completions.create({ promptID: textPrompt.id, variables: { subject: "rain" } });
    await expect
      .poll(
        async () => {
          const groups = await call(gateway, gateway.adminKey, "GET", "/v1/analytics/groups/prompts");
          return groups.body.data?.find((row: any) => row.prompt_id === textPrompt.id)?.requests ?? 0;
        },
        { timeout: 10_000 },
      )
      .toBeGreaterThanOrEqual(1);
  });
});
