import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { familyUsageOf } from "../../../core/inference/gateway/family-usage.ts";
import { bedrockAdapter } from "../../../core/providers/bedrock/index.ts";
import { toBedrockRerankRequest } from "../../../core/providers/bedrock/rerank.ts";
import { cohereAdapter } from "../../../core/providers/cohere/index.ts";
import { createCompatibleAdapter } from "../../../core/providers/openai/compatible.ts";
import { COMPATIBLE_PROVIDERS } from "../../../core/providers/openai/table.ts";
import type { ProviderTarget, RouteAdapter, TransformContext, UpstreamRequest } from "../../../core/providers/types.ts";
import { UpstreamError } from "../../../core/providers/types.ts";

/** Rerank on each provider: the request each one's docs describe, the answer returned as received, usage metered. */

const fixture = (dir: string, name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/${dir}/${name}`, import.meta.url), "utf8"));

const ctx = (target: ProviderTarget, model = "rerank-v3.5"): TransformContext => ({
  target,
  route: "rerank",
  stream: false,
  model,
  now: 1_700_000_000,
  requestId: "rr-1",
  includeUsage: false,
});

const body = {
  model: "rerank-v3.5",
  query: "What is the capital of the United States?",
  documents: ["Carson City is the capital city of Nevada.", "Washington, D.C. is the capital of the United States."],
  top_n: 2,
  return_documents: true,
  max_chunks_per_doc: 4,
};

const compatible = (id: string) => createCompatibleAdapter(COMPATIBLE_PROVIDERS.find((row) => row.id === id)!);

async function build(route: RouteAdapter, sent: Record<string, any>, context: TransformContext) {
  const request = (await route.buildRequest(sent, context)) as UpstreamRequest;
  return { request, json: JSON.parse(String(request.body)) };
}

describe("Cohere rerank", () => {
  const route = cohereAdapter.routes.rerank!;

  it("posts the body unchanged to v1/rerank (v1 keeps return_documents and max_chunks_per_doc)", async () => {
    const { request, json } = await build(route, body, ctx({ provider: "cohere", apiKey: "co-key" }));
    expect(request.url).toBe("https://api.cohere.com/v1/rerank");
    expect(request.headers.authorization).toBe("Bearer co-key");
    expect(json).toEqual(body);
  });

  it("returns the answer as received and meters its billed search units", async () => {
    const upstream = fixture("cohere", "rerank-v1-response.json");
    const answer = route.transformResponse(upstream, ctx({ provider: "cohere" }));
    expect(answer).toBe(upstream);
    upstream.meta.billed_units.search_units = 3;
    expect(await familyUsageOf("rerank", body, answer)).toMatchObject({ units: { searches: 3 } });
  });

  it("sends to a custom host's v1/rerank", async () => {
    const { request } = await build(route, body, ctx({ provider: "cohere", customHost: "http://127.0.0.1:9/" }));
    expect(request.url).toBe("http://127.0.0.1:9/v1/rerank");
  });
});

describe("Bedrock rerank", () => {
  const arn = "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0";
  const route = bedrockAdapter.routes.rerank!;
  const aws = {
    accessKeyId: "AKIDEXAMPLE",
    secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    region: "us-west-2",
  };

  it("builds Bedrock's Rerank body from the gateway's", () => {
    const request = toBedrockRerankRequest({
      ...body,
      model: arn,
      documents: ["plain", { text: "as text" }, { title: "t", body: "as json" }],
    });
    expect(request).toEqual({
      queries: [{ type: "TEXT", textQuery: { text: body.query } }],
      sources: [
        { type: "INLINE", inlineDocumentSource: { type: "TEXT", textDocument: { text: "plain" } } },
        { type: "INLINE", inlineDocumentSource: { type: "TEXT", textDocument: { text: "as text" } } },
        { type: "INLINE", inlineDocumentSource: { type: "JSON", jsonDocument: { title: "t", body: "as json" } } },
      ],
      rerankingConfiguration: {
        type: "BEDROCK_RERANKING_MODEL",
        bedrockRerankingConfiguration: { numberOfResults: 2, modelConfiguration: { modelArn: arn } },
      },
    });
    // Without top_n every document comes back ranked.
    const { top_n: _n, ...all } = body;
    expect(
      (toBedrockRerankRequest({ ...all, model: arn }).rerankingConfiguration as any).bedrockRerankingConfiguration
        .numberOfResults,
    ).toBe(2);
  });

  it("refuses a model that is not a full ARN with 400 naming `model`", () => {
    for (const model of ["amazon.rerank-v1:0", "rerank-v3.5", "arn:aws:s3:::bucket/key"]) {
      let error: unknown;
      try {
        toBedrockRerankRequest({ ...body, model });
      } catch (caught) {
        error = caught;
      }
      expect(error, model).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ status: 400, param: "model" });
    }
  });

  it("signs the agent runtime's /rerank with SigV4 for the bedrock service", async () => {
    const { request } = await build(route, { ...body, model: arn }, ctx({ provider: "bedrock", aws }, arn));
    expect(request.url).toBe("https://bedrock-agent-runtime.us-west-2.amazonaws.com/rerank");
    expect(request.headers.host).toBe("bedrock-agent-runtime.us-west-2.amazonaws.com");
    expect(request.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/,
    );
    expect(JSON.stringify(request.headers)).not.toContain(aws.secretAccessKey);
  });

  it("returns the answer as received and meters one query per 100 documents", async () => {
    const upstream = fixture("bedrock", "rerank-response.json");
    expect(route.transformResponse(upstream, ctx({ provider: "bedrock" }, arn))).toBe(upstream);
    const documents = Array.from({ length: 250 }, (_, i) => `doc ${i}`);
    expect(route.usageOf!(upstream, { ...body, documents }, ctx({ provider: "bedrock" }, arn))).toEqual({
      units: { searches: 3 },
    });
    expect(route.usageOf!(upstream, body, ctx({ provider: "bedrock" }, arn))).toEqual({ units: { searches: 1 } });
  });
});

describe("OpenAI-shaped rerank rows", () => {
  it("Voyage: top_n becomes top_k, fields Voyage lacks are dropped; tokens metered from usage", async () => {
    const { request, json } = await build(
      compatible("voyage").routes.rerank!,
      { ...body, model: "rerank-2.5", rank_fields: ["text"] },
      ctx({ provider: "voyage", apiKey: "pa-key" }, "rerank-2.5"),
    );
    expect(request.url).toBe("https://api.voyageai.com/v1/rerank");
    expect(json).toEqual({
      model: "rerank-2.5",
      query: body.query,
      documents: body.documents,
      top_k: 2,
      return_documents: true,
    });
    const answer = fixture("voyage", "rerank-response.json");
    expect(await familyUsageOf("rerank", body, answer)).toMatchObject({
      units: { searches: 1 },
      usage: { prompt_tokens: 42, total_tokens: 42 },
    });
  });

  it("Jina and Together: Cohere's body as it is; their token usage metered", async () => {
    for (const [id, dir, tokens] of [
      ["jina", "jina", 38],
      ["together-ai", "together", 61],
    ] as const) {
      const { request, json } = await build(compatible(id).routes.rerank!, body, ctx({ provider: id, apiKey: "k" }));
      expect(request.url).toMatch(/\/v1\/rerank$/);
      expect(json).toEqual(body);
      const answer = fixture(dir, "rerank-response.json");
      expect(compatible(id).routes.rerank!.transformResponse(answer, ctx({ provider: id }))).toBe(answer);
      expect(await familyUsageOf("rerank", body, answer)).toMatchObject({ usage: { total_tokens: tokens } });
    }
  });
});
