import { checkSigV4, type AwsTestCredentials } from "./bedrock.ts";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../helpers/mock-server.ts";

/**
 * One mock upstream for the image providers, each under its own path prefix (point the gateway's custom host at
 * `<url><prefix>`). Each answers as its provider's API reference documents:
 *   /openai/v1/images/{generations,edits,variations}   OpenAI Images API (JSON; edits and variations multipart),
 *                                                       https://platform.openai.com/docs/api-reference/images
 *   /openai/deployments/{d}/images/{generations,edits}  Azure OpenAI (api-key header, api-version query),
 *                                                       https://learn.microsoft.com/azure/ai-foundry/openai/reference
 *   /bedrock/model/{modelId}/invoke                     Bedrock InvokeModel, Titan / Stability image bodies, SigV4
 *                                                       checked (403 otherwise), model-parameters-titan-image.html
 *   /token, /vertex/v1/projects/.../models/{m}:predict  Google OAuth token endpoint and Imagen predict,
 *                                                       vertex-ai/generative-ai/docs/model-reference/imagen-api
 *   /stability/v2beta/stable-image/{generate/*,edit/inpaint}  Stability AI v2beta (multipart, Accept: application/json),
 *                                                       https://platform.stability.ai/docs/api-reference
 *   /broken/...                                         503 for every request (a failing provider for fallbacks)
 */

/** A real 1x1 PNG (the images every mock returns). */
export const PNG_1X1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

export interface ImageMockOptions {
  azureKey: string;
  stabilityKey: string;
  vertexToken: string;
  aws: AwsTestCredentials;
}

/** The multipart form of a recorded request. */
export async function formOf(request: RecordedRequest): Promise<FormData> {
  return new Response(new Uint8Array(request.body), {
    headers: { "content-type": String(request.headers["content-type"]) },
  }).formData();
}

function openAIAnswer(model: string | undefined, n: number, responseFormat: unknown) {
  const data = Array.from({ length: n }, () =>
    responseFormat === "url" ? { url: "https://images.example/abc.png" } : { b64_json: PNG_1X1 },
  );
  // gpt-image-1 reports token usage; DALL-E does not.
  return model?.startsWith("gpt-image")
    ? {
        created: 1_700_000_000,
        data,
        usage: {
          total_tokens: 1100,
          input_tokens: 100,
          output_tokens: 1000,
          input_tokens_details: { text_tokens: 100, image_tokens: 0 },
        },
      }
    : { created: 1_700_000_000, data };
}

async function openAIImages(request: RecordedRequest, kind: string): Promise<{ status: number; body: unknown }> {
  if (kind === "generations") {
    const body = request.json();
    if (!body.prompt) return { status: 400, body: { error: { message: "prompt required", param: "prompt" } } };
    return { status: 200, body: openAIAnswer(body.model, body.n ?? 1, body.response_format) };
  }
  const form = await formOf(request);
  const image = form.get("image") ?? form.get("image[]");
  if (!(image instanceof File) || image.size === 0)
    return { status: 400, body: { error: { message: "image file required", param: "image" } } };
  const model = form.get("model")?.toString();
  return { status: 200, body: openAIAnswer(model, Number(form.get("n") ?? 1), form.get("response_format")) };
}

export async function startImageProvidersMock(options: ImageMockOptions): Promise<MockServer> {
  return startMockServer(async (request, res) => {
    const url = new URL(request.path, "http://mock");
    const path = url.pathname;
    if (path.startsWith("/broken/")) return sendJson(res, 503, { error: { message: "down for maintenance" } });

    let match = /^\/openai\/v1\/images\/(generations|edits|variations)$/.exec(path);
    if (match) {
      const answer = await openAIImages(request, match[1]!);
      return sendJson(res, answer.status, answer.body);
    }

    match = /^\/openai\/deployments\/([^/]+)\/images\/(generations|edits)$/.exec(path);
    if (match) {
      if (request.headers["api-key"] !== options.azureKey)
        return sendJson(res, 401, {
          error: { code: "401", message: "Access denied due to invalid subscription key." },
        });
      if (!url.searchParams.get("api-version"))
        return sendJson(res, 404, { error: { code: "404", message: "Resource not found" } });
      const answer = await openAIImages(request, match[2]!);
      return sendJson(res, answer.status, answer.body);
    }

    match = /^\/bedrock\/model\/([^/]+)\/invoke$/.exec(path);
    if (match) {
      const check = await checkSigV4(request, options.aws);
      if (!check.ok)
        return sendJson(res, 403, { message: `The request signature we calculated does not match (${check.reason})` });
      const modelId = decodeURIComponent(match[1]!);
      const body = request.json();
      if (modelId.startsWith("amazon.titan-image")) {
        const count = body.imageGenerationConfig?.numberOfImages ?? 1;
        return sendJson(res, 200, { images: Array.from({ length: count }, () => PNG_1X1), error: null });
      }
      if (modelId.startsWith("stability.")) {
        return sendJson(res, 200, { seeds: [42], finish_reasons: [null], images: [PNG_1X1] });
      }
      return sendJson(res, 400, { message: `The provided model identifier is invalid.` });
    }

    if (path === "/token" && request.method === "POST") {
      return sendJson(res, 200, { access_token: options.vertexToken, expires_in: 3599, token_type: "Bearer" });
    }
    match = /^\/vertex\/v1\/projects\/[^/]+\/locations\/[^/]+\/publishers\/google\/models\/([^/:]+):predict$/.exec(
      path,
    );
    if (match) {
      if (request.headers.authorization !== `Bearer ${options.vertexToken}`)
        return sendJson(res, 401, {
          error: { code: 401, message: "Request had invalid authentication credentials.", status: "UNAUTHENTICATED" },
        });
      const body = request.json();
      const count = body.parameters?.sampleCount ?? 1;
      return sendJson(res, 200, {
        predictions: Array.from({ length: count }, () => ({ mimeType: "image/png", bytesBase64Encoded: PNG_1X1 })),
      });
    }

    match = /^\/stability\/v2beta\/stable-image\/(generate\/(ultra|core|sd3)|edit\/inpaint)$/.exec(path);
    if (match) {
      if (request.headers.authorization !== `Bearer ${options.stabilityKey}`)
        return sendJson(res, 401, { id: "e1", name: "unauthorized", errors: ["authorization: invalid API key"] });
      if (request.headers.accept !== "application/json")
        return sendJson(res, 400, {
          id: "e2",
          name: "bad_request",
          errors: ["accept: expected image/* or application/json"],
        });
      const form = await formOf(request);
      if (!form.get("prompt"))
        return sendJson(res, 400, { id: "e3", name: "bad_request", errors: ["prompt: required"] });
      if (match[1] === "edit/inpaint" && !(form.get("image") instanceof File))
        return sendJson(res, 400, { id: "e4", name: "bad_request", errors: ["image: required"] });
      return sendJson(res, 200, { image: PNG_1X1, finish_reason: "SUCCESS", seed: 1234 });
    }

    sendJson(res, 404, { error: { message: `no mock for ${request.method} ${path}` } });
  });
}
