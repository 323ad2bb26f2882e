import { notFound } from "../../../http/errors.ts";
import { parseGatewayHeaders } from "../../../http/gateway-headers.ts";
import { SseDecoder } from "../../../providers/stream/sse.ts";
import type { RequestContext } from "../../../services.ts";

/**
 * What a Gemini client (the @google/genai SDK, Google's REST examples) puts in the URL and headers, read at the
 * edge of the pipeline: the model and method from the path, the provider key from `x-goog-api-key` or `?key=`,
 * and the framing it wants for a stream.
 */

export type GeminiMethod = "generateContent" | "streamGenerateContent" | "countTokens";

const METHODS: ReadonlySet<string> = new Set<GeminiMethod>(["generateContent", "streamGenerateContent", "countTokens"]);

/**
 * `/{version}/models/{model}:{method}` -> the model (which may hold slashes: `openai/gpt-4o` on a router) and the
 * method. Another method, or no model, is a path this API does not have: 404 (in Google's shape, by the route).
 */
export function geminiCall(path: string): { model: string; method: GeminiMethod } {
  const call = decodedPath(path.replace(/^\/v1(beta|alpha)?\/models\//, ""));
  const colon = call.lastIndexOf(":");
  const model = colon > 0 ? call.slice(0, colon) : "";
  const method = call.slice(colon + 1);
  if (!model || !METHODS.has(method)) {
    throw notFound(
      `No Gemini method ${JSON.stringify(call)}: the gateway serves models/{model}:generateContent, :streamGenerateContent and :countTokens.`,
      "unknown_url",
    );
  }
  return { model, method: method as GeminiMethod };
}

/** A path segment as the client meant it (`%3A` is `:`); malformed escapes are left as they are. */
function decodedPath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The provider key as Google's clients send it (`x-goog-api-key`, or `?key=` in the URL), where OpenAI's clients
 * send `Authorization: Bearer`: it reaches the target in the target's own auth form.
 */
export function readGeminiClientKey(request: Request, ctx: RequestContext): void {
  const gateway = ctx.gateway ?? parseGatewayHeaders(request.headers, ctx.traceId);
  const key = request.headers.get("x-goog-api-key") ?? new URL(request.url).searchParams.get("key") ?? undefined;
  ctx.gateway = key ? { ...gateway, providerKey: key } : gateway;
}

/** Whether the client asked for server-sent events (`?alt=sse`, as the SDKs do) rather than a streamed JSON array. */
export function wantsSse(request: Request): boolean {
  return new URL(request.url).searchParams.get("alt") === "sse";
}

/**
 * A stream answer re-framed as Google sends `streamGenerateContent` without `alt=sse`: one JSON array whose
 * elements (the chunks, an error object last if the stream failed) arrive as they are made. Other answers (a
 * guardrail's 446, any JSON) pass as they are.
 */
export function asJsonArrayStream(response: Response): Response {
  if (!response.body || !response.headers.get("content-type")?.startsWith("text/event-stream")) return response;
  const decoder = new SseDecoder();
  const encoder = new TextEncoder();
  let first = true;
  const elements = (events: Array<{ data: string }>, controller: TransformStreamDefaultController<Uint8Array>) => {
    for (const { data } of events) {
      if (!data.trim()) continue;
      controller.enqueue(encoder.encode(`${first ? "[" : ",\r\n"}${data}`));
      first = false;
    }
  };
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => elements(decoder.push(chunk), controller),
      flush(controller) {
        elements(decoder.end(), controller);
        controller.enqueue(encoder.encode(first ? "[]" : "]"));
      },
    }),
  );
  const headers = new Headers(response.headers);
  headers.set("content-type", "application/json; charset=utf-8");
  return new Response(body, { status: response.status, headers });
}
