import { describe, expect, it } from "vitest";
import { UploadedFile } from "../../../core/providers/uploaded-file.ts";
import { azureOpenAIAdapter } from "../../../core/providers/azure/index.ts";
import { AZURE_OPENAI_API_VERSION } from "../../../core/providers/azure/endpoints.ts";
import type { RouteKind, TransformContext, UpstreamRequest } from "../../../core/providers/types.ts";

/** Azure OpenAI audio (https://learn.microsoft.com/azure/ai-foundry/openai/reference, 2024-10-21 GA). */
const audio = new UploadedFile("a.wav", "audio/wav", new Uint8Array([1, 2, 3]));

function ctx(
  route: RouteKind,
  azure: Record<string, string> = { resourceName: "contoso" },
  model = "whisper-1",
): TransformContext {
  return {
    route,
    stream: false,
    model,
    now: 1_700_000_000,
    requestId: "req-1",
    includeUsage: false,
    target: { provider: "azure-openai", apiKey: "0123456789abcdef0123456789abcdef", azure },
  };
}

async function build(route: RouteKind, body: Record<string, any>, context = ctx(route)): Promise<UpstreamRequest> {
  return azureOpenAIAdapter.routes[route]!.buildRequest(body, context);
}

describe("Azure OpenAI audio", () => {
  it("sends transcriptions as OpenAI's form to the deployment's audio path with api-key", async () => {
    const request = await build(
      "transcriptions",
      { model: "whisper-1", file: audio, response_format: "verbose_json", timestamp_granularities: ["word"] },
      ctx("transcriptions", { resourceName: "contoso", deploymentId: "my-whisper" }),
    );
    expect(request.url).toBe(
      `https://contoso.openai.azure.com/openai/deployments/my-whisper/audio/transcriptions?api-version=${AZURE_OPENAI_API_VERSION}`,
    );
    expect(request.headers["api-key"]).toBe("0123456789abcdef0123456789abcdef");
    expect(request.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    const form = await new Response(request.body as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": request.headers["content-type"]! },
    }).formData();
    expect(form.get("response_format")).toBe("verbose_json");
    expect(form.getAll("timestamp_granularities[]")).toEqual(["word"]);
    expect((form.get("file") as File).name).toBe("a.wav");
  });

  it("sends translations and speech to their deployment paths (deployment defaults to the model)", async () => {
    const translation = await build("translations", { model: "whisper-1", file: audio });
    expect(new URL(translation.url).pathname).toBe("/openai/deployments/whisper-1/audio/translations");
    const speech = await build(
      "speech",
      { model: "tts-1", input: "Hi", voice: "alloy" },
      ctx("speech", undefined, "tts-1"),
    );
    expect(new URL(speech.url).pathname).toBe("/openai/deployments/tts-1/audio/speech");
    expect(speech.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(String(speech.body))).toEqual({ model: "tts-1", input: "Hi", voice: "alloy" });
  });

  it("relays speech and text transcripts as they arrive, parses json ones", () => {
    const speech = azureOpenAIAdapter.routes.speech!;
    const transcriptions = azureOpenAIAdapter.routes.transcriptions!;
    expect(speech.rawAnswer?.({}, ctx("speech"))).toBe(true);
    expect(transcriptions.rawAnswer?.({ response_format: "srt" }, ctx("transcriptions"))).toBe(true);
    expect(transcriptions.rawAnswer?.({ response_format: "json" }, ctx("transcriptions"))).toBe(false);
  });

  it("leaves chat requests as JSON", async () => {
    const chat = await build("chat", { model: "gpt-4o", messages: [] }, ctx("chat"));
    expect(chat.headers["content-type"]).toBe("application/json");
  });
});
