import Anthropic from "@anthropic-ai/sdk";
import OpenAI, { toFile } from "openai";
import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureOrganisation } from "../../core/control/bootstrap.ts";
import { ROUTE_FAMILIES } from "../../core/routes/table.ts";
import type { E2eTarget } from "../helpers/e2e-target.ts";
import { startOpenAIBatchesMock } from "../mocks/openai-batches.ts";
import { fineTuningRoute, fineTuningState } from "../mocks/openai-fine-tuning.ts";
import { type FaultUpstream, startFaultUpstream } from "../helpers/fault-upstream.ts";
import { type MockServer, startMockServer } from "../helpers/mock-server.ts";
import { silentWav } from "../helpers/wav.ts";
import { startOidcProvider } from "../helpers/oidc-provider.ts";
import { openRealtime } from "../helpers/realtime-client.ts";
import { REALTIME_KEY, startRealtimeMock } from "../mocks/openai-realtime.ts";
import { RUN_USAGE, startAssistantsMock } from "../mocks/openai-assistants.ts";
import { seedPrompt } from "../helpers/prompts.ts";
import { startAnthropicMock } from "../mocks/anthropic.ts";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { mcpIntegrationStore, mcpServerStore } from "../../core/mcp/records.ts";
import { startMcpUpstream } from "../helpers/mcp-upstream.ts";
import { startEchoAgent } from "../helpers/a2a-echo-agent.ts";
import { startAzureMock } from "../mocks/azure.ts";
import { startBedrockMock } from "../mocks/bedrock.ts";
import { startCohereMock } from "../mocks/cohere.ts";
import { startGoogleMock } from "../mocks/google.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";
import { createTestServiceAccount, startVertexMock } from "../mocks/vertex.ts";

/**
 * What users run is what is tested: the whole gateway as it ships, driven over HTTP by the official openai,
 * anthropic, portkey-ai, MCP and A2A SDKs against mock upstreams. Every provider family (each loads its own lazily
 * loaded chunk), streaming and not, a fallback, a saved integration, and every route family of the route table at
 * least once. It runs against each target of test/helpers/e2e-target.ts: the `npm start` bundle
 * (test/e2e/bundle.test.ts) and the whole AWS shape (test/aws-shape/e2e.test.ts), where consecutive requests land
 * on different Lambda instances.
 */
export function describeGatewaySuite(startTarget: () => Promise<E2eTarget>): void {
  let gateway: E2eTarget;
  let openai: OpenAIMock;
  let faults: FaultUpstream;
  const mocks: MockServer[] = [];
  const messages = [{ role: "user" as const, content: "Hi" }];

  beforeAll(async () => {
    [gateway, openai, faults] = await Promise.all([startTarget(), startOpenAIMock(), startFaultUpstream()]);
    mocks.push(openai, faults);
  }, 600_000);

  afterAll(async () => {
    await gateway?.close();
    await Promise.all(mocks.map((mock) => mock.close()));
  });

  function clientFor(headers: Record<string, string>, apiKey = "provider-key"): OpenAI {
    return new OpenAI({
      apiKey,
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: { "x-gateway-api-key": gateway.adminKey, ...headers },
      maxRetries: 0,
      timeout: 15_000,
    });
  }

  async function api(method: string, path: string, body?: unknown, key = gateway.adminKey) {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: { "x-gateway-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: response.status, body: json };
  }

  /** Chat JSON and chat stream through a client; answers both texts. */
  async function chatBoth(client: OpenAI, model: string) {
    const answer = await client.chat.completions.create({ model, messages });
    let streamed = "";
    let chunks = 0;
    const stream = await client.chat.completions.create({
      model,
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream) {
      chunks++;
      streamed += chunk.choices[0]?.delta?.content ?? "";
    }
    return { text: answer.choices[0]!.message.content, streamed, chunks };
  }

  describe("every provider family through the bundle", () => {
    it("OpenAI and a row of the OpenAI-compatible table", async () => {
      for (const provider of ["openai", "groq"]) {
        const result = await chatBoth(
          clientFor({ "x-gateway-provider": provider, "x-gateway-custom-host": `${openai.url}/v1` }),
          "gpt-4o-mini",
        );
        expect(result.text, provider).toBeTruthy();
        expect(result.streamed, provider).toBeTruthy();
      }
    });

    it("Anthropic", async () => {
      const mock = await startAnthropicMock();
      mocks.push(mock);
      const result = await chatBoth(
        clientFor({ "x-gateway-provider": "anthropic", "x-gateway-custom-host": mock.url }),
        "claude-sonnet-4-5",
      );
      expect(result.text).toBeTruthy();
      expect(result.streamed).toBeTruthy();
    });

    it("Bedrock: Converse, ConverseStream and embeddings with a verified SigV4 signature", async () => {
      const credentials = { accessKeyId: "AKIDBUNDLE", secretAccessKey: "bundle-secret-key" };
      const mock = await startBedrockMock({ credentials });
      mocks.push(mock);
      const client = clientFor({
        "x-gateway-provider": "bedrock",
        "x-gateway-custom-host": mock.url,
        "x-gateway-aws-access-key-id": credentials.accessKeyId,
        "x-gateway-aws-secret-access-key": credentials.secretAccessKey,
        "x-gateway-aws-region": "us-east-1",
      });
      const result = await chatBoth(client, "anthropic.claude-3-5-sonnet-20240620-v1:0");
      expect(result.text).toBeTruthy();
      expect(result.streamed).toBeTruthy();
      const embedding = await client.embeddings.create({ model: "amazon.titan-embed-text-v2:0", input: "hello" });
      expect(embedding.data[0]!.embedding.length).toBeGreaterThan(0);
    });

    it("Google Gemini", async () => {
      const mock = await startGoogleMock({ apiKey: "provider-key" });
      mocks.push(mock);
      const result = await chatBoth(
        clientFor({ "x-gateway-provider": "google", "x-gateway-custom-host": mock.url }),
        "gemini-2.5-flash",
      );
      expect(result.text).toBeTruthy();
      expect(result.streamed).toBeTruthy();
    });

    it("Vertex AI (service-account token exchange)", async () => {
      const mock = await startVertexMock();
      mocks.push(mock);
      const account = await createTestServiceAccount(mock.tokenUri);
      const result = await chatBoth(
        clientFor({
          "x-gateway-provider": "vertex-ai",
          "x-gateway-custom-host": mock.url,
          "x-gateway-vertex-region": "us-central1",
          "x-gateway-vertex-service-account-json": account.json,
        }),
        "gemini-2.5-pro",
      );
      expect(result.text).toBeTruthy();
      expect(result.streamed).toBeTruthy();
    });

    it("Cohere", async () => {
      const mock = await startCohereMock({ apiKey: "co-key" });
      mocks.push(mock);
      const client = clientFor({ "x-gateway-provider": "cohere", "x-gateway-custom-host": mock.url }, "co-key");
      const result = await chatBoth(client, "command-r-plus");
      expect(result.text).toBeTruthy();
      expect(result.streamed).toBeTruthy();
    });

    it("Azure OpenAI", async () => {
      const mock = await startAzureMock({ apiKey: "azure-key" });
      mocks.push(mock);
      const client = clientFor(
        {
          "x-gateway-provider": "azure-openai",
          "x-gateway-custom-host": mock.url,
          "x-gateway-azure-deployment-id": "my-gpt4o",
          "x-gateway-azure-api-version": "2024-10-21",
        },
        "azure-key",
      );
      const result = await chatBoth(client, "gpt-4o");
      expect(result.text).toBeTruthy();
      expect(result.streamed).toBeTruthy();
    });

    it("the portkey-ai SDK with its own headers", async () => {
      const portkey = new Portkey({
        apiKey: gateway.adminKey,
        baseURL: `${gateway.url}/v1`,
        provider: "openai",
        customHost: `${openai.url}/v1`,
        Authorization: "Bearer provider-key",
      });
      const answer = (await portkey.chat.completions.create({ model: "gpt-4o-mini", messages })) as any;
      expect(answer.choices[0].message.content).toBeTruthy();
      expect(openai.requests.at(-1)!.headers.authorization).toBe("Bearer provider-key");
    });
  });

  describe("inbound formats through the bundle (loaded on first use)", () => {
    it("Responses natively on OpenAI and through the chat adapter on Bedrock: create, stream, retrieve, chain", async () => {
      const credentials = { accessKeyId: "AKIDBUNDLE", secretAccessKey: "bundle-secret-key" };
      const bedrock = await startBedrockMock({ credentials });
      mocks.push(bedrock);
      const targets = [
        {
          model: "gpt-4o-mini",
          client: clientFor({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${openai.url}/v1` }),
        },
        {
          model: "anthropic.claude-3-5-sonnet-20240620-v1:0",
          client: clientFor({
            "x-gateway-provider": "bedrock",
            "x-gateway-custom-host": bedrock.url,
            "x-gateway-aws-access-key-id": credentials.accessKeyId,
            "x-gateway-aws-secret-access-key": credentials.secretAccessKey,
            "x-gateway-aws-region": "us-east-1",
          }),
        },
      ];
      for (const { model, client } of targets) {
        const first = await client.responses.create({ model, input: "Hi" });
        expect(first.output_text, model).toBeTruthy();
        expect(first.usage?.total_tokens, model).toBeGreaterThan(0);
        await expect
          .poll(async () => (await client.responses.retrieve(first.id).catch(() => undefined))?.id)
          .toBe(first.id);
        let streamed = "";
        const stream = await client.responses.create({
          model,
          input: "Again",
          previous_response_id: first.id,
          stream: true,
        });
        for await (const event of stream) if (event.type === "response.output_text.delta") streamed += event.delta;
        expect(streamed, model).toBeTruthy();
      }
    });

    it("Anthropic Messages with @anthropic-ai/sdk: native on Anthropic, translated on an OpenAI-compatible provider", async () => {
      const mock = await startAnthropicMock();
      mocks.push(mock);
      const targets = [
        {
          model: "claude-3-5-sonnet-20241022",
          headers: { "x-gateway-provider": "anthropic", "x-gateway-custom-host": mock.url },
        },
        {
          model: "gpt-4o-mini",
          headers: { "x-gateway-provider": "openai", "x-gateway-custom-host": `${openai.url}/v1` },
        },
      ];
      for (const { model, headers } of targets) {
        const client = new Anthropic({
          apiKey: "provider-key",
          baseURL: gateway.url,
          defaultHeaders: { "x-gateway-api-key": gateway.adminKey, ...headers },
          maxRetries: 0,
        });
        const message = await client.messages.create({ model, max_tokens: 64, messages });
        expect(message.content[0]?.type, model).toBe("text");
        const final = await client.messages.stream({ model, max_tokens: 64, messages }).finalMessage();
        expect(final.stop_reason, model).toBe("end_turn");
        expect((await client.messages.countTokens({ model, messages })).input_tokens, model).toBeGreaterThan(0);
      }
    });
  });

  describe("files, batches and fine-tuning through the bundle (engine chunks loaded on first use)", () => {
    it("files, a provider-native batch polled by the scheduled task, and a fine-tuning job", async () => {
      const jobs = fineTuningState(1);
      const provider = await startOpenAIBatchesMock({
        apiKey: "provider-key",
        pollsToComplete: 1,
        extraRoutes: [fineTuningRoute(jobs)],
      });
      mocks.push(provider);
      const client = clientFor({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${provider.url}/v1` });
      const line = (id: string) =>
        JSON.stringify({
          custom_id: id,
          method: "POST",
          url: "/v1/chat/completions",
          body: { model: "gpt-4o-mini", messages },
        });
      const input = await client.files.create({
        file: await toFile(Buffer.from(`${line("a")}\n${line("b")}\n`), "input.jsonl"),
        purpose: "batch",
      });
      expect(await (await client.files.content(input.id)).text()).toContain('"custom_id":"a"');
      // A large file in parts (the Uploads API): joined in part_ids order.
      const upload = await client.uploads.create({
        filename: "parts.jsonl",
        purpose: "batch",
        bytes: 10,
        mime_type: "application/jsonl",
      });
      const second = await client.uploads.parts.create(upload.id, { data: await toFile(Buffer.from("world"), "b") });
      const first = await client.uploads.parts.create(upload.id, { data: await toFile(Buffer.from("hello"), "a") });
      const completed = await client.uploads.complete(upload.id, { part_ids: [first.id, second.id] });
      expect(completed.status).toBe("completed");
      expect(await (await client.files.content(completed.file!.id)).text()).toBe("helloworld");
      const batch = await client.batches.create({
        input_file_id: input.id,
        endpoint: "/v1/chat/completions",
        completion_window: "24h",
      });
      // The queue worker submits it to the provider; the scheduled task (every 10 s) polls it to the end.
      await expect
        .poll(async () => (await client.batches.retrieve(batch.id)).status, { timeout: 40_000, interval: 500 })
        .toBe("completed");
      const done = await client.batches.retrieve(batch.id);
      expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
      const output = (await (await client.files.content(done.output_file_id!)).text()).trim().split("\n");
      expect(output.map((entry) => JSON.parse(entry).custom_id).sort()).toEqual(["a", "b"]);

      const training = await client.files.create({
        file: await toFile(Buffer.from('{"messages": []}\n'), "train.jsonl"),
        purpose: "fine-tune",
      });
      const job = await client.fineTuning.jobs.create({ model: "gpt-4o-mini-2024-07-18", training_file: training.id });
      expect(job).toMatchObject({ object: "fine_tuning.job", training_file: training.id });
      await expect
        .poll(async () => (await client.fineTuning.jobs.retrieve(job.id)).status, { timeout: 20_000, interval: 500 })
        .toBe("succeeded");
      expect((await client.fineTuning.jobs.listEvents(job.id)).data.length).toBeGreaterThan(0);
    }, 90_000);
  });

  describe("routing through the bundle", () => {
    it("a fallback whose first target fails answers from the second", async () => {
      const config = {
        strategy: { mode: "fallback" },
        targets: [
          { provider: "openai", api_key: "k", custom_host: faults.host("503") },
          { provider: "openai", api_key: "k", custom_host: faults.host("ok-second") },
        ],
      };
      const client = clientFor({ "x-gateway-config": JSON.stringify(config) });
      const { data, response } = await client.chat.completions.create({ model: "m", messages }).withResponse();
      expect(data.choices[0]!.message.content).toBe("second");
      expect(response.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");
      let streamed = "";
      for await (const chunk of await client.chat.completions.create({ model: "m", messages, stream: true }))
        streamed += chunk.choices[0]?.delta?.content ?? "";
      expect(streamed).toBe("second");
    });

    it("guardrails (loaded on first use): an input denial answers 446, an output check passes a stream", async () => {
      const config = {
        provider: "openai",
        custom_host: `${openai.url}/v1`,
        input_guardrails: [{ "default.regexMatch": { rule: "(?i)password", not: true }, deny: true }],
        output_guardrails: [{ "default.regexMatch": { rule: "(?i)password", not: true }, deny: true }],
      };
      const client = clientFor({ "x-gateway-config": JSON.stringify(config) });
      const denied = await client.chat.completions
        .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "the password" }] })
        .catch((error: unknown) => error);
      expect(denied).toBeInstanceOf(OpenAI.APIError);
      expect((denied as InstanceType<typeof OpenAI.APIError>).status).toBe(446);
      expect((denied as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: "hooks_failed" });
      let streamed = "";
      for await (const chunk of await client.chat.completions.create({ model: "gpt-4o-mini", messages, stream: true }))
        streamed += chunk.choices[0]?.delta?.content ?? "";
      expect(streamed).toBeTruthy();
    });

    it("a saved integration, also inside a saved config", async () => {
      const created = await api("POST", "/v1/integrations", {
        name: "Bundle OpenAI",
        slug: "bundle-openai",
        ai_provider_id: "openai",
        key: "sk-integration-bundle",
        configurations: { custom_host: `${openai.url}/v1` },
      });
      expect(created.status).toBe(201);
      const direct = await clientFor({ "x-gateway-provider": "@bundle-openai" }).chat.completions.create({
        model: "gpt-4o-mini",
        messages,
      });
      expect(direct.choices[0]!.message.content).toBeTruthy();
      expect(openai.requests.at(-1)!.headers.authorization).toBe("Bearer sk-integration-bundle");

      const config = await api("POST", "/v1/configs", {
        name: "bundle fallback",
        config: { strategy: { mode: "fallback" }, targets: [{ provider: "@bundle-openai" }] },
      });
      expect(config.status, JSON.stringify(config.body)).toBeLessThan(300);
      const viaConfig = await clientFor({
        "x-gateway-config": config.body.slug ?? config.body.id,
      }).chat.completions.create({
        model: "gpt-4o-mini",
        messages,
      });
      expect(viaConfig.choices[0]!.message.content).toBeTruthy();
    });
  });

  describe("every route family through the bundle", () => {
    it("completions, embeddings, models, passthrough", async () => {
      const client = clientFor({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${openai.url}/v1` });
      const completion = await client.completions.create({ model: "gpt-3.5-turbo-instruct", prompt: "Say hi" });
      expect(completion.choices[0]!.text).toBeTruthy();
      const embedding = await client.embeddings.create({ model: "text-embedding-3-small", input: "hi" });
      expect(embedding.data[0]!.embedding.length).toBeGreaterThan(0);
      const models = await client.models.list();
      expect(models.data.length).toBeGreaterThan(0);
      const passthrough = await fetch(`${gateway.url}/v1/proxy/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: "Bearer provider-key",
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-provider": "openai",
          "x-gateway-custom-host": `${openai.url}/v1`,
        },
        body: JSON.stringify({ model: "gpt-4o-mini", messages }),
      });
      expect(passthrough.status).toBe(200);
      expect((await passthrough.json()).choices[0].message.content).toBeTruthy();
    });

    it("a saved prompt renders (mustache loads on first use) and runs, streamed and not, with the portkey-ai SDK", async () => {
      // Seeded in the target's own stores: these routes only read prompts.
      const promptId = await gateway.withStores(async (stores) => {
        const { organisationId, defaultWorkspaceId } = await ensureOrganisation(stores.records);
        const prompt = await seedPrompt(
          stores.records,
          { organisationId, workspaceId: defaultWorkspaceId },
          {
            slug: "bundle-prompt",
            versions: [{ string: JSON.stringify([{ role: "user", content: "Hi {{name}}" }]), model: "gpt-4o-mini" }],
          },
        );
        return prompt.id;
      });
      const portkey = new Portkey({
        apiKey: gateway.adminKey,
        baseURL: `${gateway.url}/v1`,
        provider: "openai",
        customHost: `${openai.url}/v1`,
        Authorization: "Bearer provider-key",
      });
      const rendered: any = await portkey.prompts.render({ promptID: promptId, variables: { name: "Ada" } });
      expect(rendered.data.messages).toEqual([{ role: "user", content: "Hi Ada" }]);
      const answer: any = await portkey.prompts.completions.create({ promptID: promptId, variables: { name: "Ada" } });
      expect(answer.choices[0].message.content).toBeTruthy();
      expect(openai.lastRequest()!.json().messages).toEqual([{ role: "user", content: "Hi Ada" }]);
      let streamed = "";
      const stream: any = await portkey.prompts.completions.create({
        promptID: promptId,
        variables: { name: "Ada" },
        stream: true,
      });
      for await (const chunk of stream) streamed += chunk.choices?.[0]?.delta?.content ?? "";
      expect(streamed).toBeTruthy();
    });

    it("images, audio (multipart in, bytes out, duration read by music-metadata), moderations and rerank", async () => {
      const media = await startMockServer(async (request, response): Promise<void> => {
        const json = (body: unknown) => {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify(body));
        };
        if (request.path === "/v1/images/generations")
          return void json({ created: 1, data: [{ b64_json: "aW1n" }, { b64_json: "aW1n" }] });
        if (request.path === "/v1/images/edits") {
          const form = request.body.toString("latin1");
          return void json({ created: 1, data: [{ b64_json: form.includes('name="image"') ? "ZWRpdA" : "bm8" }] });
        }
        if (request.path === "/v1/audio/speech") {
          response.writeHead(200, { "content-type": "audio/mpeg" });
          response.write(Buffer.from("ID3-first-"));
          await new Promise((resolve) => setTimeout(resolve, 30));
          return void response.end(Buffer.from("second"));
        }
        if (request.path === "/v1/audio/transcriptions") return void json({ text: "hello there" });
        if (request.path === "/v1/moderations")
          return void json({
            id: "modr-1",
            model: "omni-moderation-latest",
            results: [{ flagged: false, categories: {} }],
          });
        if (request.path === "/v1/rerank")
          return void json({ results: [{ index: 1, relevance_score: 0.9 }], usage: { total_tokens: 12 } });
        response.writeHead(404);
        response.end();
      });
      mocks.push(media);
      const client = clientFor({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${media.url}/v1` });

      const images = await client.images.generate({ model: "dall-e-3", prompt: "a cat", n: 2, size: "1024x1024" });
      expect(images.data).toHaveLength(2);
      const png = await toFile(Buffer.from("\x89PNG\r\n\x1a\nfake"), "cat.png", { type: "image/png" });
      const edited = await client.images.edit({ model: "dall-e-2", image: png, prompt: "a hat" });
      expect(edited.data?.[0]?.b64_json).toBe("ZWRpdA");

      const speech = await client.audio.speech.create({ model: "tts-1", voice: "alloy", input: "Hello" });
      expect(Buffer.from(await speech.arrayBuffer()).toString()).toBe("ID3-first-second");
      expect(speech.headers.get("content-type")).toBe("audio/mpeg");

      const audio = await toFile(Buffer.from(silentWav(3)), "hello.wav", { type: "audio/wav" });
      const transcript = await client.audio.transcriptions.create({ model: "whisper-1", file: audio });
      expect(transcript.text).toBe("hello there");

      const moderation = await client.moderations.create({ input: "hi" });
      expect(moderation.results[0]?.flagged).toBe(false);
      expect(media.requests.find((r) => r.path === "/v1/moderations")?.json().model).toBe("text-moderation-latest");

      const rerank = await fetch(`${gateway.url}/v1/rerank`, {
        method: "POST",
        headers: {
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-provider": "jina",
          "x-gateway-custom-host": `${media.url}/v1`,
          authorization: "Bearer jina-key",
          "content-type": "application/json",
        },
        body: JSON.stringify({ model: "jina-reranker-v2-base-multilingual", query: "q", documents: ["a", "b"] }),
      });
      expect(rerank.status).toBe(200);
      expect((await rerank.json()).results[0].index).toBe(1);

      // The logs carry what each family used and what it cost: 2 images at $0.04, 3 s of whisper.
      const logOf = async (path: string) => {
        const { body } = await api("GET", "/v1/logs?limit=50");
        return (body.data as Array<Record<string, any>>).find((log) => log.path === path);
      };
      await expect.poll(async () => (await logOf("/v1/images/generations"))?.units?.images).toBe(2);
      expect((await logOf("/v1/images/generations"))?.cost).toBeCloseTo(0.08);
      await expect.poll(async () => (await logOf("/v1/audio/transcriptions"))?.units?.seconds).toBeCloseTo(3, 2);
      expect((await logOf("/v1/audio/transcriptions"))?.cost).toBeCloseTo(0.0003, 6);
      await expect.poll(async () => (await logOf("/v1/audio/speech"))?.units?.characters).toBe(5);
      await expect.poll(async () => (await logOf("/v1/rerank"))?.usage?.totalTokens).toBe(12);
      expect(gateway.output()).not.toMatch(/unhandled error/);
    });

    it("assistants: create, run with createAndPoll, the completing poll logged with the run's usage", async () => {
      const assistantsMock = await startAssistantsMock({ apiKey: "sk-assistants" });
      mocks.push(assistantsMock);
      const client = clientFor(
        { "x-gateway-provider": "openai", "x-gateway-custom-host": `${assistantsMock.url}/v1` },
        "sk-assistants",
      );
      const assistant = await client.beta.assistants.create({ model: "gpt-4o", instructions: "Answer." });
      const thread = await client.beta.threads.create();
      await client.beta.threads.messages.create(thread.id, { role: "user", content: "Hello?" });
      const run = await client.beta.threads.runs.createAndPoll(
        thread.id,
        { assistant_id: assistant.id },
        { pollIntervalMs: 5 },
      );
      expect(run.status).toBe("completed");
      expect(run.usage).toEqual(RUN_USAGE);
      await expect
        .poll(async () => {
          const { body } = await api("GET", "/v1/logs?limit=50");
          return (body.data as Array<Record<string, any>>).find(
            (log) => log.path.endsWith(`/runs/${run.id}`) && log.usage,
          )?.usage?.totalTokens;
        })
        .toBe(1500);
    });

    it("a realtime WebSocket session relayed both ways by the bundle's upgrade handler, logged with its usage", async () => {
      const upstream = await startRealtimeMock();
      try {
        const traceId = `bundle-realtime-${Date.now()}`;
        const client = await openRealtime(`${gateway.url.replace(/^http/, "ws")}/v1/realtime?model=gpt-realtime`, {
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-provider": "openai",
          "x-gateway-custom-host": `${upstream.url}/v1`,
          "x-gateway-trace-id": traceId,
          authorization: `Bearer ${REALTIME_KEY}`,
        });
        await client.next("session.created");
        client.send({ type: "response.create" });
        expect((await client.next("response.done")).response.usage.total_tokens).toBe(300);
        client.ws.close(1000);
        expect((await client.closed).code).toBe(1000);
        await expect
          .poll(async () => (await api("GET", `/v1/logs?trace_id=${traceId}`)).body.data?.[0]?.status)
          .toBe(101);
        const refused = await openRealtime(`${gateway.url.replace(/^http/, "ws")}/v1/realtime`, {}).catch((e) => e);
        expect(refused.status).toBe(401);
      } finally {
        await upstream.close();
      }
    });

    it("SSO sign-in through openid-client in the bundle, and SCIM provisioning with a SCIM token", async () => {
      const idp = await startOidcProvider();
      try {
        idp.clients.set("bundle-web", { secret: "bundle-web-secret-0123456789" });
        idp.nextUser = { email: "sso-bundle@example.com", email_verified: true, name: "Bundle User" };
        const settings = await api("PUT", "/v1/admin/organisation/sso", {
          issuer: idp.issuer,
          client_id: "bundle-web",
          client_secret: "bundle-web-secret-0123456789",
          token_endpoint_auth_method: "client_secret_basic",
          allowed_domains: ["example.com"],
        });
        expect(settings.status, JSON.stringify(settings.body)).toBe(200);
        const login = await fetch(`${gateway.url}/v1/auth/sso/login`, { redirect: "manual" });
        expect(login.status).toBe(302);
        const atIdp = await fetch(login.headers.get("location")!, { redirect: "manual" });
        const callback = await fetch(atIdp.headers.get("location")!, { redirect: "manual" });
        expect(callback.status).toBe(302);
        const cookie = callback.headers
          .getSetCookie()
          .map((line) => line.split(";")[0])
          .join("; ");
        const self = await fetch(`${gateway.url}/v1/auth/self`, { headers: { cookie } });
        expect(self.status).toBe(200);
        expect(await self.json()).toMatchObject({ email: "sso-bundle@example.com" });
      } finally {
        await idp.close();
      }

      const token = await api("POST", "/v1/admin/scim/tokens", { name: "bundle idp" });
      expect(token.status, JSON.stringify(token.body)).toBe(201);
      const scim = await fetch(`${gateway.url}/scim/v2/Users`, {
        method: "POST",
        headers: { authorization: `Bearer ${token.body.token}`, "content-type": "application/scim+json" },
        body: JSON.stringify({
          schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
          userName: "scim-bundle@example.com",
          name: { givenName: "Scim", familyName: "Bundle" },
          emails: [{ value: "scim-bundle@example.com", type: "work", primary: true }],
          active: true,
        }),
      });
      expect(scim.status).toBe(201);
      const found = await fetch(
        `${gateway.url}/scim/v2/Users?filter=${encodeURIComponent('userName eq "scim-bundle@example.com"')}`,
        {
          headers: { authorization: `Bearer ${token.body.token}` },
        },
      );
      expect((await found.json()).totalResults).toBe(1);
    });

    it("an MCP tool call through the bundle's MCP endpoint (the MCP SDK loads on first use), logged", async () => {
      const upstream = await startMcpUpstream();
      try {
        // Seeded in the target's own stores (the MCP admin API is another family).
        const slug = await gateway.withStores(async (stores) => {
          const { organisationId, defaultWorkspaceId } = await ensureOrganisation(stores.records);
          const integration = await mcpIntegrationStore(stores.records).create(organisationId, {
            slug: "bundle-mcp-upstream",
            name: "Bundle upstream",
            url: upstream.url,
            transport: "http",
            auth_type: "none",
            configurations: {},
            capabilities: [
              { type: "tool", name: "echo", enabled: true },
              { type: "tool", name: "add", enabled: false },
            ],
            server_info: {},
            workspaces: [],
            global_workspace_access: true,
          });
          const server = await mcpServerStore(stores.records).create(organisationId, {
            slug: "bundle-mcp",
            workspaceId: defaultWorkspaceId,
            name: "Bundle MCP",
            mcp_integration_id: integration.id,
            capability_overrides: {},
            default_user_access: "allow",
            user_access: [],
          });
          return server.slug;
        });
        const traceId = `bundle-mcp-${Date.now()}`;
        const client = new McpClient({ name: "bundle", version: "1.0.0" });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/${slug}`), {
            requestInit: { headers: { "x-gateway-api-key": gateway.adminKey, "x-gateway-trace-id": traceId } },
          }),
        );
        expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["echo"]);
        const result = await client.callTool({ name: "echo", arguments: { text: "bundled" } });
        expect(result.content).toEqual([{ type: "text", text: "echo: bundled" }]);
        await client.close();
        let logged: any[] = [];
        for (let attempt = 0; attempt < 50 && !logged.some((log) => log.mcp?.method === "tools/call"); attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          logged = (await api("GET", `/v1/logs?trace_id=${traceId}`)).body.data;
        }
        expect(logged.find((log) => log.mcp?.method === "tools/call")).toMatchObject({
          provider: "mcp",
          requestedModel: "bundle-mcp",
          mcp: { name: "echo" },
        });
      } finally {
        await upstream.close();
      }
    });

    it("MCP admin sync, an A2A agent call and OAuth client registration (their SDKs load on first use)", async () => {
      const upstream = await startMcpUpstream();
      const agent = await startEchoAgent();
      try {
        // The MCP admin API pulls the upstream's capabilities through the MCP SDK's client.
        const integration = await api("POST", "/v1/mcp-integrations", {
          name: "Bundle sync",
          slug: "bundle-sync",
          url: upstream.url,
          auth_type: "none",
          transport: "http",
        });
        expect(integration.status, JSON.stringify(integration.body)).toBe(201);
        const synced = await api("POST", `/v1/mcp-integrations/${integration.body.id}/sync`, {});
        expect(synced.status, JSON.stringify(synced.body)).toBe(200);
        const capabilities = await api("GET", `/v1/mcp-integrations/${integration.body.id}/capabilities`);
        expect(JSON.stringify(capabilities.body)).toContain("echo");

        // An A2A agent: its card fetched and checked, then a 0.3 message/send relayed by the A2A SDK's handlers.
        const workspace = await api("POST", "/v1/admin/workspaces", { name: "Bundle agents" });
        const created = await api("POST", "/v2/agent-integrations", {
          name: "Echo",
          slug: "bundle-echo",
          url: agent.url,
          workspace_id: workspace.body.id,
        });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        const key = await api("POST", "/v1/api-keys/workspace/service", {
          name: "bundle-agents",
          workspace_id: workspace.body.id,
          scopes: ["agents.invoke"],
        });
        const answer = await api(
          "POST",
          "/v1/agents/bundle-echo",
          {
            jsonrpc: "2.0",
            id: 1,
            method: "message/send",
            params: {
              message: { kind: "message", messageId: "m-1", role: "user", parts: [{ kind: "text", text: "bundled" }] },
            },
          },
          key.body.key,
        );
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        expect(JSON.stringify(answer.body.result)).toContain("echo: bundled");

        // The OAuth server for MCP clients: metadata and a dynamic registration.
        const metadata = await (await fetch(`${gateway.url}/.well-known/oauth-authorization-server`)).json();
        expect(metadata.code_challenge_methods_supported).toEqual(["S256"]);
        const registered = await fetch(`${gateway.url}/oauth/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:3999/cb"], token_endpoint_auth_method: "none" }),
        });
        expect(registered.status).toBe(201);
      } finally {
        await upstream.close();
        await agent.close();
      }
    });

    it("control-plane families answer: logs, configs, integrations, api-keys, workspaces and the rest", async () => {
      await expect.poll(async () => (await api("GET", "/v1/logs?limit=5")).body.data?.length ?? 0).toBeGreaterThan(0);
      expect((await api("GET", "/v1/configs")).status).toBe(200);
      expect((await api("GET", "/v1/integrations")).status).toBe(200);
      expect((await api("GET", "/v1/api-keys")).status).toBe(200);
      const workspaces = await api("GET", "/v1/admin/workspaces");
      expect(workspaces.status).toBe(200);
      expect(workspaces.body.data.length).toBeGreaterThan(0);
      // Without a key, a control-plane route refuses (authentication runs in the bundle too).
      expect((await api("GET", "/v1/configs", undefined, "gk-not-a-key")).status).toBe(401);
    });

    it("each family of the route table is mounted and answers without a server error", async () => {
      const failures: string[] = [];
      for (const family of ROUTE_FAMILIES) {
        // Its first GET route without parameters (a list), else its first route.
        const route =
          family.routes.find((candidate) => candidate.method === "GET" && !/[:*]/.test(candidate.path)) ??
          family.routes[0]!;
        const path = route.path.replace(/:\w+/g, "x").replace("*", "x");
        const { status, body } = await api(route.method, path, route.method === "GET" ? undefined : {});
        const text = JSON.stringify(body);
        // /v1/auth/self takes a JWT, never a key: a 403 that says so is its answer to the admin key. /v1/realtime
        // is a WebSocket endpoint: a plain GET is told to upgrade (426; the session is tested above).
        const plain =
          route.method === "GET" &&
          !/[:*]/.test(route.path) &&
          route.path !== "/v1/auth/self" &&
          route.path !== "/v1/realtime";
        // The Assistants API forwards to a provider: without one, 400 missing_provider is its handler's answer.
        const needsProvider = family.name === "assistants" && status === 400 && text.includes("missing_provider");
        if (status >= 500 || text.includes("unknown_url") || (plain && status !== 200 && !needsProvider)) {
          failures.push(`${family.name}: ${route.method} ${path} -> ${status} ${text.slice(0, 200)}`);
        }
      }
      expect(failures).toEqual([]);
      expect(gateway.output()).not.toMatch(/unhandled error/);
    });
  });
}
