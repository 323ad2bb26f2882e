import type {
  ProviderAdapter,
  RouteAdapter,
  RouteKind,
  StreamTransformer,
  TransformContext,
  UpstreamRequest,
} from "../types.ts";
import { MEDIA_ROUTES, MULTIPART_ROUTES, UpstreamError } from "../types.ts";
import { encodeForm } from "../form-body.ts";
import { joinUrl } from "../url.ts";
import { TYPED_EVENTS_SSE } from "../stream/typed-events.ts";
import { subtitleRoute } from "../audio/subtitles-from-segments.ts";

/**
 * Providers whose API is OpenAI's: one adapter built from a table row. Bodies pass through untouched
 * (unknown fields included) except for the row's quirks, so every OpenAI field reaches the provider.
 */
export interface CompatibleProvider {
  id: string;
  name: string;
  /** Default base URL including the version segment, e.g. https://api.groq.com/openai/v1. Absent: custom host required. */
  baseUrl?: string;
  /** How the key is sent. */
  auth: "bearer" | "api-key-header" | "none";
  routes: OpenAIRouteKind[];
  /** Request fields the provider rejects; removed before sending. */
  dropParams?: string[];
  /**
   * Request fields the provider names differently (`{seed: "random_seed"}`). The value moves to the new name
   * unless the client already sent the provider's name, which then wins.
   */
  renameParams?: Record<string, string>;
  /**
   * Provider rejects `stream_options`: it is never injected and a client's own is removed; usage in streams is
   * then whatever the provider reports by itself, or counted by the gateway.
   */
  noStreamOptions?: boolean;
  /** Extra static headers. */
  headers?: Record<string, string>;
  /**
   * The provider's transcriptions write no `srt` or `vtt` (Groq: json, text and verbose_json only): those are
   * asked as verbose_json and rendered from its segments (core/providers/audio/subtitles-from-segments.ts).
   */
  subtitlesFromSegments?: boolean;
  /** Docs link for the provider table (docs/providers.md). */
  docs?: string;
  /**
   * Routes whose wire format is the provider's own rather than OpenAI's (Mistral's moderation categories): the
   * factory's adapter replaces the generic one for that route; it gets the row for base URL and auth.
   */
  ownRoutes?: Partial<Record<RouteKind, (row: CompatibleProvider) => RouteAdapter>>;
}

/** The routes an OpenAI-shaped API can have (Gemini's generateContent is Google's and Vertex AI's own). */
export type OpenAIRouteKind = Exclude<RouteKind, "gemini">;

export const ROUTE_PATHS: Record<OpenAIRouteKind, string> = {
  chat: "/chat/completions",
  completions: "/completions",
  embeddings: "/embeddings",
  models: "/models",
  responses: "/responses",
  messages: "/messages",
  image_generations: "/images/generations",
  image_edits: "/images/edits",
  image_variations: "/images/variations",
  speech: "/audio/speech",
  transcriptions: "/audio/transcriptions",
  translations: "/audio/translations",
  moderations: "/moderations",
  rerank: "/rerank",
  ocr: "/ocr",
};

/** Transcript formats OpenAI answers as text rather than JSON. */
const TEXT_TRANSCRIPTS = new Set(["text", "srt", "vtt"]);

/**
 * Answers relayed as bytes rather than parsed: speech is audio; a transcript is text in the text formats; and
 * streams of these families are SSE of their own events (gpt-4o-transcribe's `transcript.text.delta`,
 * gpt-image's `image_generation.partial_image`), relayed as they come.
 */
export function rawAnswerOf(kind: RouteKind, body: Record<string, any>): boolean {
  if (kind === "speech" || body.stream === true) return true;
  return (kind === "transcriptions" || kind === "translations") && TEXT_TRANSCRIPTS.has(body.response_format);
}

/** Routes whose answers can stream (SSE of OpenAI chunks). */
export function routeStreams(kind: RouteKind): boolean {
  return kind === "chat" || kind === "completions";
}

export function authHeaders(row: Pick<CompatibleProvider, "auth">, apiKey: string | undefined): Record<string, string> {
  if (!apiKey || row.auth === "none") return {};
  return row.auth === "api-key-header" ? { "api-key": apiKey } : { authorization: `Bearer ${apiKey}` };
}

export function baseUrlOf(row: CompatibleProvider, ctx: Pick<TransformContext, "target">): string {
  const base = ctx.target.customHost ?? row.baseUrl;
  if (!base) {
    throw new UpstreamError(400, `provider ${row.id} needs a custom host (x-gateway-custom-host)`, {
      code: "custom_host_required",
    });
  }
  return base;
}

/**
 * The OpenAI body as the provider should get it: the row's dropped and renamed fields applied, and
 * `stream_options.include_usage` asked for on streams the client did not ask usage for (so cost and limits are
 * exact; the pipeline hides the usage-only chunk from that client). Returns the same object when nothing changes.
 */
export function prepareCompatibleBody(
  row: Pick<CompatibleProvider, "dropParams" | "renameParams" | "noStreamOptions">,
  body: Record<string, any>,
  ctx: Pick<TransformContext, "stream" | "includeUsage">,
  kind: RouteKind,
): Record<string, unknown> {
  let payload: Record<string, unknown> = body;
  const copy = (): Record<string, unknown> => (payload === body ? { ...body } : payload);
  if (row.dropParams?.some((name) => name in body)) {
    payload = copy();
    for (const name of row.dropParams) delete payload[name];
  }
  if (row.renameParams) {
    for (const [from, to] of Object.entries(row.renameParams)) {
      if (!(from in payload)) continue;
      payload = copy();
      if (!(to in payload)) payload[to] = payload[from];
      delete payload[from];
    }
  }
  if (kind === "responses" && "previous_response_id" in payload) {
    // The gateway resolves `previous_response_id` itself (core/features/responses): `input` already holds the stored
    // conversation, so the provider must not add its own copy (or fail on an id it never issued).
    payload = copy();
    delete payload.previous_response_id;
  }
  if (row.noStreamOptions) {
    if ("stream_options" in payload) {
      payload = copy();
      delete payload.stream_options;
    }
  } else if (routeStreams(kind) && ctx.stream && !ctx.includeUsage) {
    payload = { ...payload, stream_options: { ...(body.stream_options ?? {}), include_usage: true } };
  }
  return payload;
}

/** Passes OpenAI chunks through as they came (strings: no re-serialisation); the pipeline adds `[DONE]`. */
export function passthroughTransformer(): StreamTransformer {
  return {
    push: (event) => (event.data === "[DONE]" ? [] : [event.data]),
    end: () => [],
  };
}

/** The stream of an OpenAI-shaped chat or completions route: relayed byte for byte. */
export const RELAYED_SSE = { framing: "sse", createTransformer: passthroughTransformer, relay: true } as const;

/** How a route of an OpenAI-shaped provider streams: chunks relayed, Responses events parsed, or not at all. */
export function streamOfRoute(kind: RouteKind): RouteAdapter["stream"] {
  if (kind === "responses" || kind === "messages") return TYPED_EVENTS_SSE;
  return routeStreams(kind) ? RELAYED_SSE : undefined;
}

/** A multipart route's upstream request: the form encoded once (core/providers/form-body.ts). */
export async function multipartRequest(
  url: string,
  headers: Record<string, string>,
  form: Record<string, unknown>,
): Promise<UpstreamRequest> {
  const encoded = await encodeForm(form);
  return { url, method: "POST", headers: { ...headers, "content-type": encoded.contentType }, body: encoded.body };
}

function rowHeaders(row: CompatibleProvider, ctx: Pick<TransformContext, "target">): Record<string, string> {
  return { ...row.headers, ...authHeaders(row, ctx.target.apiKey), ...ctx.target.forwardHeaders };
}

export function createCompatibleAdapter(row: CompatibleProvider): ProviderAdapter {
  const routes: Partial<Record<RouteKind, RouteAdapter>> = {};
  for (const kind of row.routes) {
    const own = row.ownRoutes?.[kind];
    if (own) {
      routes[kind] = own(row);
      continue;
    }
    if (row.subtitlesFromSegments && (kind === "transcriptions" || kind === "translations")) {
      routes[kind] = subtitleRoute(
        (body) => rawAnswerOf(kind, body),
        (body, ctx) =>
          multipartRequest(
            joinUrl(baseUrlOf(row, ctx), ROUTE_PATHS[kind]),
            rowHeaders(row, ctx),
            prepareCompatibleBody(row, body, ctx, kind),
          ),
      );
      continue;
    }
    routes[kind] = {
      buildRequest(body, ctx) {
        const url = joinUrl(baseUrlOf(row, ctx), ROUTE_PATHS[kind]);
        const headers = rowHeaders(row, ctx);
        if (kind === "models") return { url, method: "GET", headers };
        if (MULTIPART_ROUTES.has(kind))
          return multipartRequest(url, headers, prepareCompatibleBody(row, body, ctx, kind));
        headers["content-type"] = "application/json";
        return { url, method: "POST", headers, body: JSON.stringify(prepareCompatibleBody(row, body, ctx, kind)) };
      },
      transformResponse: (upstream) => upstream,
      stream: streamOfRoute(kind),
      ...(MEDIA_ROUTES.has(kind) && { rawAnswer: (body: Record<string, any>) => rawAnswerOf(kind, body) }),
    };
  }
  return {
    id: row.id,
    name: row.name,
    routes,
    passthrough: (target) => ({
      baseUrl: baseUrlOf(row, { target }),
      headers: { ...row.headers, ...authHeaders(row, target.apiKey), ...target.forwardHeaders },
    }),
  };
}
