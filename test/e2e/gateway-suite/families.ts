import { toFile } from "openai";
import { OPENAI_MODERATION_CATEGORIES } from "../../../core/providers/types.ts";
import { Portkey } from "portkey-ai";
import { describe, expect, it } from "vitest";
import { ensureOrganisation } from "../../../core/control/organisation/bootstrap.ts";
import { startMockServer } from "../../helpers/mock-server.ts";
import { silentWav } from "../../helpers/wav.ts";
import { startOidcProvider } from "../../helpers/oidc-provider.ts";
import { openRealtime } from "../../helpers/realtime-client.ts";
import { REALTIME_KEY, startRealtimeMock } from "../../mocks/openai-realtime.ts";
import { RUN_USAGE, startAssistantsMock } from "../../mocks/openai-assistants.ts";
import { seedPrompt } from "../../helpers/prompts.ts";
import type { SuiteContext } from "./context.ts";

/** The end-to-end suite (index.ts): the inference and identity families. */
export function describeFamilies(suite: SuiteContext): void {
  const { clientFor, api, messages, mocks } = suite;
  describe("every route family", () => {
    it("completions, embeddings, models, passthrough", async () => {
      const client = clientFor({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${suite.openai.url}/v1` });
      const completion = await client.completions.create({ model: "gpt-3.5-turbo-instruct", prompt: "Say hi" });
      expect(completion.choices[0]!.text).toBeTruthy();
      const embedding = await client.embeddings.create({ model: "text-embedding-3-small", input: "hi" });
      expect(embedding.data[0]!.embedding.length).toBeGreaterThan(0);
      const models = await client.models.list();
      expect(models.data.length).toBeGreaterThan(0);
      const passthrough = await fetch(`${suite.gateway.url}/v1/proxy/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: "Bearer provider-key",
          "x-gateway-api-key": suite.gateway.adminKey,
          "x-gateway-provider": "openai",
          "x-gateway-custom-host": `${suite.openai.url}/v1`,
        },
        body: JSON.stringify({ model: "gpt-4o-mini", messages }),
      });
      expect(passthrough.status).toBe(200);
      expect((await passthrough.json()).choices[0].message.content).toBeTruthy();
    });

    it("a saved prompt renders (mustache loads on first use) and runs, streamed and not, with the portkey-ai SDK", async () => {
      // Seeded in the target's own stores: these routes only read prompts.
      const promptId = await suite.gateway.withStores(async (stores) => {
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
        apiKey: suite.gateway.adminKey,
        baseURL: `${suite.gateway.url}/v1`,
        provider: "openai",
        customHost: `${suite.openai.url}/v1`,
        Authorization: "Bearer provider-key",
      });
      const rendered: any = await portkey.prompts.render({ promptID: promptId, variables: { name: "Ada" } });
      expect(rendered.data.messages).toEqual([{ role: "user", content: "Hi Ada" }]);
      const answer: any = await portkey.prompts.completions.create({ promptID: promptId, variables: { name: "Ada" } });
      expect(answer.choices[0].message.content).toBeTruthy();
      expect(suite.openai.lastRequest()!.json().messages).toEqual([{ role: "user", content: "Hi Ada" }]);
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
            // OpenAI's moderation object: every category, its score and the input types it was judged on.
            results: [
              {
                flagged: false,
                categories: Object.fromEntries(OPENAI_MODERATION_CATEGORIES.map((name) => [name, false])),
                category_scores: Object.fromEntries(OPENAI_MODERATION_CATEGORIES.map((name) => [name, 0.001])),
                category_applied_input_types: Object.fromEntries(
                  OPENAI_MODERATION_CATEGORIES.map((name) => [name, ["text"]]),
                ),
              },
            ],
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

      const rerank = await fetch(`${suite.gateway.url}/v1/rerank`, {
        method: "POST",
        headers: {
          "x-gateway-api-key": suite.gateway.adminKey,
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
      expect(suite.gateway.output()).not.toMatch(/unhandled error/);
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

    it("a realtime WebSocket session relayed both ways by the gateway's upgrade handler, logged with its usage", async () => {
      const upstream = await startRealtimeMock();
      try {
        const traceId = `bundle-realtime-${Date.now()}`;
        const client = await openRealtime(
          `${suite.gateway.url.replace(/^http/, "ws")}/v1/realtime?model=gpt-realtime`,
          {
            "x-gateway-api-key": suite.gateway.adminKey,
            "x-gateway-provider": "openai",
            "x-gateway-custom-host": `${upstream.url}/v1`,
            "x-gateway-trace-id": traceId,
            authorization: `Bearer ${REALTIME_KEY}`,
          },
        );
        await client.next("session.created");
        client.send({ type: "response.create" });
        expect((await client.next("response.done")).response.usage.total_tokens).toBe(300);
        client.ws.close(1000);
        expect((await client.closed).code).toBe(1000);
        await expect
          .poll(async () => (await api("GET", `/v1/logs?trace_id=${traceId}`)).body.data?.[0]?.status)
          .toBe(101);
        const refused = await openRealtime(`${suite.gateway.url.replace(/^http/, "ws")}/v1/realtime`, {}).catch(
          (e) => e,
        );
        expect(refused.status).toBe(401);
      } finally {
        await upstream.close();
      }
    });

    it("SSO sign-in through openid-client, and SCIM provisioning with a SCIM token", async () => {
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
        const login = await fetch(`${suite.gateway.url}/v1/auth/sso/login`, { redirect: "manual" });
        expect(login.status).toBe(302);
        const atIdp = await fetch(login.headers.get("location")!, { redirect: "manual" });
        const callback = await fetch(atIdp.headers.get("location")!, { redirect: "manual" });
        expect(callback.status).toBe(302);
        const cookie = callback.headers
          .getSetCookie()
          .map((line) => line.split(";")[0])
          .join("; ");
        const self = await fetch(`${suite.gateway.url}/v1/auth/self`, { headers: { cookie } });
        expect(self.status).toBe(200);
        expect(await self.json()).toMatchObject({ email: "sso-bundle@example.com" });
      } finally {
        await idp.close();
      }

      const token = await api("POST", "/v1/admin/scim/tokens", { name: "bundle idp" });
      expect(token.status, JSON.stringify(token.body)).toBe(201);
      const scim = await fetch(`${suite.gateway.url}/scim/v2/Users`, {
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
        `${suite.gateway.url}/scim/v2/Users?filter=${encodeURIComponent('userName eq "scim-bundle@example.com"')}`,
        {
          headers: { authorization: `Bearer ${token.body.token}` },
        },
      );
      expect((await found.json()).totalResults).toBe(1);
    });
  });
}
