/**
 * Token prices (USD per million tokens) for models the models.dev catalog leaves out - embedding, image, audio,
 * moderation and rerank models priced by the token - so every inference family has a cost. Each row under our
 * provider id; the catalog's own entry wins where one exists. Facts from each provider's pricing page.
 */
export interface SupplementModel {
  id: string;
  name: string;
  input: number;
  output?: number;
}

export const SUPPLEMENT_MODELS: Readonly<Record<string, readonly SupplementModel[]>> = {
  // https://openai.com/api/pricing
  openai: [
    { id: "text-embedding-3-small", name: "Text Embedding 3 Small", input: 0.02 },
    { id: "text-embedding-3-large", name: "Text Embedding 3 Large", input: 0.13 },
    { id: "text-embedding-ada-002", name: "Text Embedding Ada 002", input: 0.1 },
    // gpt-image-1: text input $5, image output $40 per million tokens (its answers report both).
    { id: "gpt-image-1", name: "GPT Image 1", input: 5, output: 40 },
    { id: "gpt-4o-transcribe", name: "GPT-4o Transcribe", input: 2.5, output: 10 },
    { id: "gpt-4o-mini-transcribe", name: "GPT-4o mini Transcribe", input: 1.25, output: 5 },
    { id: "gpt-4o-mini-tts", name: "GPT-4o mini TTS", input: 0.6, output: 12 },
    // Moderation models are free.
    { id: "omni-moderation-latest", name: "Omni Moderation", input: 0, output: 0 },
    { id: "text-moderation-latest", name: "Text Moderation (latest)", input: 0, output: 0 },
    { id: "text-moderation-stable", name: "Text Moderation (stable)", input: 0, output: 0 },
  ],
  // https://mistral.ai/pricing
  "mistral-ai": [
    { id: "mistral-embed", name: "Mistral Embed", input: 0.1 },
    { id: "mistral-moderation-latest", name: "Mistral Moderation", input: 0.1 },
  ],
  // https://cohere.com/pricing
  cohere: [
    { id: "embed-v4.0", name: "Embed 4", input: 0.12 },
    { id: "embed-english-v3.0", name: "Embed English 3", input: 0.1 },
    { id: "embed-multilingual-v3.0", name: "Embed Multilingual 3", input: 0.1 },
  ],
  // https://ai.google.dev/gemini-api/docs/pricing
  google: [{ id: "gemini-embedding-001", name: "Gemini Embedding", input: 0.15 }],
  // https://aws.amazon.com/bedrock/pricing/
  bedrock: [
    { id: "amazon.titan-embed-text-v2:0", name: "Titan Text Embeddings V2", input: 0.02 },
    { id: "amazon.titan-embed-text-v1", name: "Titan Text Embeddings", input: 0.1 },
    { id: "cohere.embed-english-v3", name: "Cohere Embed English on Bedrock", input: 0.1 },
    { id: "cohere.embed-multilingual-v3", name: "Cohere Embed Multilingual on Bedrock", input: 0.1 },
  ],
  // https://docs.voyageai.com/docs/pricing
  voyage: [
    { id: "voyage-3.5", name: "Voyage 3.5", input: 0.06 },
    { id: "voyage-3.5-lite", name: "Voyage 3.5 lite", input: 0.02 },
    { id: "voyage-3-large", name: "Voyage 3 large", input: 0.18 },
    { id: "rerank-2.5", name: "Voyage Rerank 2.5", input: 0.05 },
    { id: "rerank-2.5-lite", name: "Voyage Rerank 2.5 lite", input: 0.02 },
    { id: "rerank-2", name: "Voyage Rerank 2", input: 0.05 },
    { id: "rerank-2-lite", name: "Voyage Rerank 2 lite", input: 0.02 },
  ],
  // https://jina.ai/api-dashboard (token-based plans; the list price per million tokens).
  jina: [
    { id: "jina-embeddings-v3", name: "Jina Embeddings v3", input: 0.05 },
    { id: "jina-reranker-v2-base-multilingual", name: "Jina Reranker v2", input: 0.05 },
  ],
};
