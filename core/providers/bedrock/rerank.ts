import { type RouteAdapter, type TransformContext, UpstreamError } from "../types.ts";
import { joinUrl } from "../url.ts";
import { bedrockPost, regionOf } from "./http.ts";

/**
 * Bedrock's Rerank operation (Agents for Amazon Bedrock runtime, `POST /rerank`,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_agent-runtime_Rerank.html), signed with SigV4 for
 * the `bedrock` service like the model runtime. The model is named by its full ARN (spec 4.1), e.g.
 * `arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0`. The answer, `{results: [{index,
 * relevanceScore, document?}], nextToken?}`, is returned as received. A custom host replaces
 * https://bedrock-agent-runtime.{region}.amazonaws.com.
 */

const MODEL_ARN = /^arn:aws(-[a-z]+)*:bedrock:[a-z0-9-]+:\d{0,12}:[a-z-]+\/\S+$/;

/** Bedrock counts a query over up to 100 documents as one query (https://aws.amazon.com/bedrock/pricing/). */
const DOCUMENTS_PER_QUERY = 100;
/** The most results Bedrock returns (numberOfResults, 1..1000). */
const MAX_RESULTS = 1000;

type RerankSource =
  | { type: "INLINE"; inlineDocumentSource: { type: "TEXT"; textDocument: { text: string } } }
  | { type: "INLINE"; inlineDocumentSource: { type: "JSON"; jsonDocument: unknown } };

export function toBedrockRerankRequest(body: Record<string, any>): Record<string, unknown> {
  const model = body.model;
  if (typeof model !== "string" || !MODEL_ARN.test(model)) {
    throw new UpstreamError(
      400,
      "Bedrock rerank needs the model's full ARN in `model`, e.g. arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0",
      { param: "model", code: "invalid_model" },
    );
  }
  const documents: unknown[] = Array.isArray(body.documents) ? body.documents : [];
  const numberOfResults =
    typeof body.top_n === "number" ? Math.min(body.top_n, MAX_RESULTS) : Math.min(documents.length, MAX_RESULTS);
  return {
    queries: [{ type: "TEXT", textQuery: { text: String(body.query ?? "") } }],
    sources: documents.map(sourceOf),
    rerankingConfiguration: {
      type: "BEDROCK_RERANKING_MODEL",
      bedrockRerankingConfiguration: { numberOfResults, modelConfiguration: { modelArn: model } },
    },
  };
}

/** A string (or a `{text}` object) is a text document; any other object is ranked as JSON. */
function sourceOf(document: unknown): RerankSource {
  const text =
    typeof document === "string" ? document : isTextOnly(document) ? (document as { text: string }).text : undefined;
  if (text !== undefined) return { type: "INLINE", inlineDocumentSource: { type: "TEXT", textDocument: { text } } };
  return { type: "INLINE", inlineDocumentSource: { type: "JSON", jsonDocument: document } };
}

function isTextOnly(document: unknown): boolean {
  if (!document || typeof document !== "object") return false;
  const keys = Object.keys(document);
  return keys.length === 1 && keys[0] === "text" && typeof (document as { text: unknown }).text === "string";
}

export function bedrockAgentRuntimeUrl(ctx: TransformContext, path: string): string {
  return joinUrl(ctx.target.customHost ?? `https://bedrock-agent-runtime.${regionOf(ctx)}.amazonaws.com`, path);
}

export const bedrockRerankRoute: RouteAdapter = {
  buildRequest: (body, ctx) => bedrockPost(ctx, bedrockAgentRuntimeUrl(ctx, "/rerank"), toBedrockRerankRequest(body)),
  transformResponse: (upstream) => upstream,
  // Bedrock's answer carries no usage: it bills queries, counted from the request.
  usageOf: (_answer, body) => ({
    units: {
      searches: Math.max(
        1,
        Math.ceil((Array.isArray(body.documents) ? body.documents.length : 0) / DOCUMENTS_PER_QUERY),
      ),
    },
  }),
};
