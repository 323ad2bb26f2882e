import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * A saved prompt's whole life through the API only, with the unmodified portkey-ai SDK: a partial and a prompt
 * created, a new version written and published, the production label moved to the old version, then rendered and
 * run (streamed and not) by version, by label and by default. The control routes and the runtime are built apart;
 * this proves they agree on what is stored.
 */

const REPLY = "Photosynthesis turns light into sugar.";

let gateway: TestGateway;
let upstream: OpenAIMock;
let portkey: Portkey;

beforeAll(async () => {
  [gateway, upstream] = await Promise.all([startTestGateway(), startOpenAIMock({ reply: REPLY })]);
  const integration = await call(gateway, gateway.adminKey, "POST", "/v1/integrations", {
    name: "Lifecycle OpenAI",
    slug: "lifecycle-openai",
    ai_provider_id: "openai",
    key: "sk-lifecycle-0123456789",
    configurations: { custom_host: `${upstream.url}/v1` },
  });
  expect(integration.status).toBe(201);
  portkey = new Portkey({ apiKey: gateway.adminKey, baseURL: `${gateway.url}/v1` });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const template = (question: string) =>
  JSON.stringify([
    { role: "system", content: "You are a {{tone}} teacher." },
    { role: "user", content: `${question}\n{{> closing}}` },
  ]);

describe("a saved prompt from creation to completion, through the API", () => {
  it("creates, versions, publishes, labels, renders and runs it", async () => {
    const workspaceId = gateway.gateway.bootstrap.defaultWorkspaceId;
    const partial: any = await portkey.prompts.partials.create({
      name: "closing",
      string: "End with: {{closing}}",
      workspace_id: workspaceId,
    } as any);
    expect(partial.slug).toBeTruthy();
    const partialSlug = partial.slug as string;
    const withPartial = (question: string) => template(question).replace("{{> closing}}", `{{> ${partialSlug}}}`);

    const created: any = await portkey.prompts.create({
      name: "Biology explainer",
      workspace_id: workspaceId,
      string: withPartial("First: {{question}}"),
      parameters: { temperature: 0.3, max_tokens: 100 },
      model: "gpt-4o-mini",
      virtual_key: "lifecycle-openai",
    } as any);
    await portkey.prompts.update(created.id, { string: withPartial("Second: {{question}}") });
    await portkey.prompts.publish(created.id, { version: 2 });
    const labels: any = await portkey.labels.list({ workspace_id: workspaceId } as any);
    const production = labels.data.find((label: any) => label.name === "production");
    expect(production).toBeTruthy();
    await portkey.prompts.versions.update(created.id, "1", { label_id: production.id });

    const variables = { tone: "friendly", question: "what is photosynthesis?", closing: "a question" };
    const render = async (promptID: string) =>
      ((await portkey.prompts.render({ promptID, variables })) as any).data.messages[1].content;
    expect(await render(created.id)).toBe("Second: what is photosynthesis?\nEnd with: a question");
    expect(await render(`${created.slug}@production`)).toBe("First: what is photosynthesis?\nEnd with: a question");
    expect(await render(`${created.id}@1`)).toBe("First: what is photosynthesis?\nEnd with: a question");
    expect(upstream.requests).toHaveLength(0);

    const answer: any = await portkey.prompts.completions.create({ promptID: created.id, variables });
    expect(answer.choices[0].message.content).toBe(REPLY);
    expect(upstream.lastRequest()!.json()).toMatchObject({
      model: "gpt-4o-mini",
      temperature: 0.3,
      max_completion_tokens: 100,
      messages: [
        { role: "system", content: "You are a friendly teacher." },
        { role: "user", content: "Second: what is photosynthesis?\nEnd with: a question" },
      ],
    });

    const stream: any = await portkey.prompts.completions.create({
      promptID: `${created.id}@production`,
      variables,
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices?.[0]?.delta?.content ?? "";
    expect(text).toBe(REPLY);
    expect(upstream.lastRequest()!.json().messages[1].content).toBe(
      "First: what is photosynthesis?\nEnd with: a question",
    );

    // The partial is in use by the published version: it cannot be deleted.
    const refused = await call(gateway, gateway.adminKey, "DELETE", `/v1/prompts/partials/${partial.id}`);
    expect(refused.status).toBe(409);
  });
});
