import type { TrustedHosts } from "../security/custom-host.ts";

/**
 * The provider adapter contract. A provider declares, per route it supports, pure transforms between the
 * OpenAI wire format (what clients send and receive) and the provider's own format. The gateway pipeline
 * (core/inference/gateway) owns everything impure: credentials, fetch, retries, timeouts, streaming, logging.
 */

/**
 * Inference routes a provider may support. Later families add their kinds here. `responses` (OpenAI's Responses
 * API) and `messages` (Anthropic's Messages API) are inbound formats: a provider that lacks them natively is
 * reached through its chat adapter (core/inference/formats/via-chat.ts).
 */
export type RouteKind =
  | "chat"
  | "completions"
  | "embeddings"
  | "models"
  | "responses"
  | "messages"
  | "gemini"
  | MediaRouteKind;

/**
 * The other inference families (spec 1, 4.1): images, audio, moderations, rerank and OCR. Their bodies are
 * validated by the family's schema (core/inference/gateway/schemas); multipart ones (MULTIPART_ROUTES) arrive as an object
 * whose file fields are UploadedFile values (core/providers/uploaded-file.ts).
 */
export type MediaRouteKind =
  | "image_generations"
  | "image_edits"
  | "image_variations"
  | "speech"
  | "transcriptions"
  | "translations"
  | "moderations"
  | "rerank"
  | "ocr";

export const MEDIA_ROUTES: ReadonlySet<RouteKind> = new Set<MediaRouteKind>([
  "image_generations",
  "image_edits",
  "image_variations",
  "speech",
  "transcriptions",
  "translations",
  "moderations",
  "rerank",
  "ocr",
]);

/** Routes whose client bodies are multipart/form-data (files): OpenAI's image edits and variations, audio input. */
export const MULTIPART_ROUTES: ReadonlySet<RouteKind> = new Set([
  "image_edits",
  "image_variations",
  "transcriptions",
  "translations",
]);

/**
 * What a request used that is billed by the unit rather than by the token (per image, per second of audio, per
 * character of speech, per rerank search, per OCR page). Priced by core/inference/catalog/unit-cost.ts; logged.
 */
export interface BilledUnits {
  images?: number;
  /** Seconds of input audio (transcriptions, translations) or of generated audio. */
  seconds?: number;
  /** Characters of text turned into speech. */
  characters?: number;
  /** Rerank searches (Cohere's search units; one query over up to 100 documents counts one). */
  searches?: number;
  /** Document pages read by OCR. */
  pages?: number;
}

/** What a family's answer used: tokens (priced from the catalog), units (priced per unit), or both. */
export interface MeteredUsage {
  usage?: ChatUsage;
  units?: BilledUnits;
  /** Price dimensions that change a unit's price (image `size` and `quality`). */
  priceKey?: { size?: string; quality?: string };
  /** The tokens were counted by the gateway, not reported by the provider (logged as estimated). */
  estimated?: boolean;
}

/**
 * A non-JSON answer a transform makes (a transcript as text, SRT or VTT rendered from a provider's JSON): sent
 * to the client with its content type, logged as its text.
 */
export class TextAnswer {
  readonly text: string;
  readonly contentType: string;
  constructor(text: string, contentType: string) {
    this.text = text;
    this.contentType = contentType;
  }
  toJSON(): string {
    return this.text;
  }
}

/**
 * Where and how to reach a provider for one request: resolved from request headers, a saved integration or a
 * config target. Credentials never leave this object except in the upstream request.
 */
export interface ProviderTarget {
  /** Registry id, e.g. `openai`, `anthropic`, `bedrock`. */
  provider: string;
  /** The provider API key (from `Authorization: Bearer`, a saved integration or a config). */
  apiKey?: string;
  /** Base URL that replaces the provider's default (already checked against SSRF rules). */
  customHost?: string;
  azure?: { resourceName?: string; deploymentId?: string; apiVersion?: string; modelName?: string };
  /** `storageBucket`: Vertex AI batch prediction reads its input from and writes its output to this GCS bucket. */
  vertex?: {
    projectId?: string;
    region?: string;
    serviceAccountJson?: string;
    storageBucket?: string;
    /** `X-Vertex-AI-LLM-Request-Type` (`dedicated` / `shared`): Provisioned Throughput or pay-as-you-go. */
    llmRequestType?: string;
  };
  aws?: {
    accessKeyId?: string;
    secretAccessKey?: string;
    sessionToken?: string;
    region?: string;
    /** Bedrock batch inference: the bucket its jobs read and write, and the service role Bedrock assumes. */
    s3Bucket?: string;
    roleArn?: string;
    /** `assumedRole`: Bedrock calls are signed with credentials of `roleArn`, assumed through STS (bedrock/assume-role.ts). */
    authType?: "assumedRole";
    externalId?: string;
    /** Per-request STS session tags (x-gateway-aws-session-tags, spec 5.2). */
    sessionTags?: Record<string, string>;
  };
  /** Extra headers sent to the provider as they are (`x-gateway-forward-headers`, custom model headers). */
  forwardHeaders?: Record<string, string>;
  /** Saved integrations: which models may be called and their custom headers (applied by core/inference/gateway/call-target.ts). */
  modelRules?: ModelRules;
  /** The saved integration this target came from, for its price overrides. */
  integrationId?: string;
}

/** An integration's model list: `allowAll` false admits only enabled models; `headers` go to the provider with that model. */
export interface ModelRules {
  allowAll: boolean;
  models: Record<string, { enabled: boolean; headers?: Record<string, string> }>;
}

/** What a transform may know about the request besides its body. */
export interface TransformContext {
  target: ProviderTarget;
  route: RouteKind;
  stream: boolean;
  /** The model the client asked for (after config overrides). */
  model: string;
  /** Unix seconds, for `created` fields. */
  now: number;
  /** Id for generated OpenAI objects (`chatcmpl-...`) when the provider gives none. */
  requestId: string;
  /** TRUSTED_CUSTOM_HOSTS: side requests (OAuth token endpoints named in credentials) may reach only these
   * besides the provider's own hosts. */
  trustedHosts?: TrustedHosts;
  /** The client asked for a final usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** Cancels async work such as token exchanges. */
  signal?: AbortSignal;
  /** Fetch used for side requests (OAuth token endpoints). Defaults to global fetch; tests inject. */
  fetch?: typeof fetch;
}

export interface UpstreamRequest {
  url: string;
  method: "GET" | "POST" | "PUT" | "DELETE";
  headers: Record<string, string>;
  /** A stream is sent as it is read (file uploads), never buffered whole. */
  body?: string | Uint8Array | ReadableStream<Uint8Array>;
}

/** How a provider frames a streamed answer. */
export type StreamFraming = "sse" | "aws-eventstream" | "ndjson";

/**
 * One framed unit of an upstream stream: an SSE event (`event` name, `data` text), an AWS event-stream
 * message (`event` = `:event-type` or `:exception-type` header, `data` = payload text) or an ndjson line.
 */
export interface UpstreamEvent {
  event?: string;
  data: string;
  /** AWS event-stream `:message-type` (`event` or `exception`). */
  messageType?: string;
}

/**
 * Turns upstream events into OpenAI chunks. Stateful per request (block indexes, tool call ids, usage);
 * `push` returns zero or more chunks for one event, `end` flushes at end of stream.
 * A chunk is an object (serialised by the pipeline) or a string that is already serialised JSON.
 * Emit usage when the provider reports it, as OpenAI does with `include_usage`: a last chunk with
 * `choices: []` and `usage`; the pipeline reads it for cost and drops it when the client did not ask for it.
 * Throw UpstreamError for an error inside the stream (the pipeline ends the stream with an error event and
 * reports the failure to the routing layer).
 */
export interface StreamTransformer {
  push(event: UpstreamEvent): Array<object | string>;
  end(): Array<object | string>;
}

export interface RouteAdapter {
  /**
   * When present, the route is native only for the models it accepts (Vertex AI and Bedrock speak Anthropic's
   * Messages only for Claude models); other models go through the chat adapter.
   */
  supportsModel?(model: string): boolean;
  /** Builds the upstream request from the (validated) OpenAI-shaped body. May be async (token exchange, signing). */
  buildRequest(body: Record<string, any>, ctx: TransformContext): UpstreamRequest | Promise<UpstreamRequest>;
  /**
   * Upstream JSON body (status 2xx) -> OpenAI-shaped JSON (or a TextAnswer for text formats). Throw UpstreamError
   * for an error hidden in a 2xx.
   */
  transformResponse(upstream: any, ctx: TransformContext): object;
  /**
   * True when the 2xx answer is not JSON and is relayed to the client as it arrives, with its content type
   * (speech audio; `text`, `srt` and `vtt` transcripts from providers that write them): transformResponse is
   * not called, and usage comes from usageOf (with answer undefined) or the family's meter.
   */
  rawAnswer?(body: Record<string, any>, ctx: TransformContext): boolean;
  /**
   * What the request used, when the family's default meter (core/inference/gateway/family-usage.ts) does not read this
   * provider's answer (Cohere's billed search units, a provider's own usage fields). `answer` is the upstream
   * JSON before transformResponse, undefined for raw answers.
   */
  usageOf?(answer: unknown, body: Record<string, any>, ctx: TransformContext): MeteredUsage | undefined;
  /**
   * Chat: a conversation that ends with an assistant message is continued by the model from that message's text
   * (Anthropic's and Bedrock's assistant prefill, Gemini's trailing model turn). The gateway then asks such a target
   * to finish a broken stream with the partial answer as that message; other targets get an instruction to go on.
   */
  continuesAssistantTurn?: boolean;
  /**
   * Chat: the provider-bound history items this adapter sends on for `model` (ProviderBoundItem); the gateway
   * drops the others from a conversation before it reaches this adapter (core/inference/formats/history.ts).
   */
  keepsHistory?(model: string): ReadonlySet<ProviderBoundItem>;
  /** Present on routes that stream. */
  stream?: {
    framing: StreamFraming;
    createTransformer(ctx: TransformContext): StreamTransformer;
    /**
     * The provider's SSE events already are this route's OpenAI chunks (its transformer passes them through):
     * the gateway relays its bytes as they are (core/inference/gateway/stream/sse-relay.ts) instead of decoding and encoding them.
     */
    relay?: boolean;
  };
}

/**
 * History items in chat messages that only the provider that made them can take back: Anthropic's thinking blocks
 * (with their signatures) that chat answers hand out in `content_blocks`, and Gemini's thought signatures on tool
 * calls (`extra_content.google.thought_signature`).
 */
export type ProviderBoundItem = "anthropic_thinking" | "gemini_thought_signature";

/** What Claude's chat adapters keep (Anthropic, Claude on Vertex AI), and Gemini's (Google, Gemini on Vertex AI). */
export const ANTHROPIC_HISTORY: ReadonlySet<ProviderBoundItem> = new Set(["anthropic_thinking"]);
export const GEMINI_HISTORY: ReadonlySet<ProviderBoundItem> = new Set(["gemini_thought_signature"]);

export interface ProviderAdapter {
  id: string;
  /** Human name for docs and the provider table (docs/providers.md). */
  name: string;
  routes: Partial<Record<RouteKind, RouteAdapter>>;
  /**
   * Maps a non-2xx upstream answer to the OpenAI error shape (the upstream status is kept by the pipeline).
   * Default: the generic mapper in errors.ts, which understands OpenAI-, Anthropic-, Google- and AWS-style bodies.
   */
  mapError?(
    status: number,
    body: string,
  ): { message: string; type: string; code: string | null; param?: string | null };
  /**
   * Generic pass-through (spec 4.7, `/v1/{provider-endpoint}` and `/v1/proxy/...`): the base URL (custom host
   * applied, version segment included, e.g. `https://api.openai.com/v1`) that the client's path after `/v1` is
   * appended to, and the provider's auth (and static) headers for the target. Absent: the provider does not
   * support pass-through yet. Throw UpstreamError (e.g. 400 custom host required) when the target lacks what
   * is needed.
   */
  passthrough?(target: ProviderTarget, ctx: PassthroughContext): PassthroughEndpoint | Promise<PassthroughEndpoint>;
}

/** What a pass-through endpoint may need besides the target: side requests (OAuth token exchanges). */
export interface PassthroughContext {
  trustedHosts?: TrustedHosts;
  signal?: AbortSignal;
  /** Fetch used for side requests; defaults to global fetch (tests inject). */
  fetch?: typeof fetch;
  /**
   * Pass-through calls only: the client's provider path (after `/v1` or `/v1/proxy`, with its leading slash), its
   * query (`?...` or empty) and the client headers that will be forwarded (lower-case names). A provider reads
   * them to pick a host or an API version segment from the path, or to leave a header the client set alone.
   */
  path?: string;
  search?: string;
  headers?: Readonly<Record<string, string>>;
}

export interface PassthroughEndpoint {
  baseUrl: string;
  headers: Record<string, string>;
  /**
   * The path and query appended to baseUrl when they are not the client's own (`path` + `search` of the context):
   * a host-selecting prefix removed, a required query parameter added.
   */
  path?: string;
  /**
   * Signs the finished upstream request (Bedrock's SigV4 covers method, URL, headers and body): returns the
   * request to send. Absent: the headers above are the whole auth.
   */
  sign?(request: UpstreamRequest): Promise<UpstreamRequest>;
}

/** An upstream failure: non-2xx answer, an error inside a 2xx body, or an error event in a stream. */
export class UpstreamError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  /** The upstream answer's headers, when there was one (the routing layer reads `retry-after` from them). */
  readonly headers?: Headers;
  /**
   * True when no usable answer arrived: network error, timeout, or a stream that failed before its first
   * chunk. A fallback always moves on from these, whatever its `on_status_codes`.
   */
  readonly transport: boolean;
  constructor(
    status: number,
    message: string,
    options: {
      type?: string;
      code?: string | null;
      param?: string | null;
      headers?: Headers;
      transport?: boolean;
    } = {},
  ) {
    super(message);
    this.name = "UpstreamError";
    this.status = status;
    this.type = options.type ?? (status >= 500 ? "server_error" : "invalid_request_error");
    this.code = options.code ?? null;
    this.param = options.param ?? null;
    this.headers = options.headers;
    this.transport = options.transport ?? false;
  }
}

/** OpenAI `finish_reason` values. */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "function_call";

/** Normalised usage in OpenAI chat shape (the pipeline reads it for cost and limits). */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: {
    cached_tokens?: number;
    /** Tokens written to the provider's prompt cache (Anthropic, Bedrock), all TTLs. */
    cache_creation_tokens?: number;
    /** The part of those written for an hour (Anthropic's `ephemeral_1h_input_tokens`), priced apart. */
    cache_creation_1h_tokens?: number;
    audio_tokens?: number;
    image_tokens?: number;
  };
  completion_tokens_details?: { reasoning_tokens?: number; audio_tokens?: number; image_tokens?: number };
}

/** The eleven categories of the moderation result (spec 2.10), which every provider's answer carries. */
export const MODERATION_CATEGORIES = [
  "hate",
  "hate/threatening",
  "harassment",
  "harassment/threatening",
  "self-harm",
  "self-harm/intent",
  "self-harm/instructions",
  "sexual",
  "sexual/minors",
  "violence",
  "violence/graphic",
] as const;

/** OpenAI's own categories (omni-moderation-latest): the eleven and the two `illicit` ones. */
export const OPENAI_MODERATION_CATEGORIES = [...MODERATION_CATEGORIES, "illicit", "illicit/violent"] as const;

/** An event of an event-typed stream (Responses, Messages): written as `event: <type>` + `data: <json>`. */
export interface TypedEvent {
  type: string;
  [key: string]: unknown;
}
