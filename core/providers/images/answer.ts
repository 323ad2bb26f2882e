import { UpstreamError } from "../types.ts";

/**
 * OpenAI's images answer built from base64 images, for providers that return bytes rather than URLs (Bedrock,
 * Vertex AI Imagen, Stability AI). `response_format: "url"` cannot be honoured there: the answer is always
 * `b64_json` (docs/api.md says so).
 */
export function imagesAnswer(
  images: readonly string[],
  created: number,
  extra: Record<string, unknown> = {},
): { created: number; data: Array<{ b64_json: string }> } {
  return { created, ...extra, data: images.map((b64_json) => ({ b64_json })) };
}

/** A provider said it refused the prompt or filtered every image: a 400 as OpenAI answers a moderation block. */
export function contentPolicyError(provider: string, reason: string): UpstreamError {
  return new UpstreamError(400, `${provider} refused the request: ${reason}`, {
    type: "invalid_request_error",
    code: "content_policy_violation",
  });
}

/** These providers make one image per call: asking for more is a 400 naming `n`, not a silent single image. */
export function requireSingleImage(body: Record<string, any>, provider: string): void {
  const n = body.n === undefined ? 1 : Number(body.n);
  if (n !== 1) {
    throw new UpstreamError(400, `${provider} makes one image per request; send n=1 (got ${n}).`, {
      param: "n",
      code: "unsupported_value",
    });
  }
}
