import { describe, expect, it } from "vitest";
import { azureAIAdapter } from "../../../core/providers/azure/index.ts";
import type { ProviderTarget, TransformContext, UpstreamRequest } from "../../../core/providers/types.ts";

/**
 * Mistral OCR on Azure AI Foundry: https://{resource}.services.ai.azure.com/providers/mistral/azure/ocr with
 * Mistral's body (Microsoft Learn, "How to use image-to-text models", Mistral Document AI).
 */

const ctx = (target: Partial<ProviderTarget>): TransformContext => ({
  target: { provider: "azure-ai", ...target },
  route: "ocr",
  stream: false,
  model: "mistral-document-ai-2505",
  now: 1_700_000_000,
  requestId: "ocr-1",
  includeUsage: false,
});

const body = {
  model: "mistral-document-ai-2505",
  document: { type: "document_url", document_url: "data:application/pdf;base64,JVBERi0=" },
  include_image_base64: false,
};

async function build(target: Partial<ProviderTarget>, sent: Record<string, any> = body) {
  const request = (await azureAIAdapter.routes.ocr!.buildRequest(sent, ctx(target))) as UpstreamRequest;
  return { request, json: JSON.parse(String(request.body)) };
}

describe("Azure AI OCR", () => {
  it("posts Mistral's OCR body to the resource's Mistral OCR path with the key in api-key", async () => {
    const { request, json } = await build({ apiKey: "azure-key", azure: { resourceName: "my-foundry" } });
    expect(request.url).toBe("https://my-foundry.services.ai.azure.com/providers/mistral/azure/ocr");
    expect(request.headers["api-key"]).toBe("azure-key");
    expect(request.headers.authorization).toBeUndefined();
    expect(json).toEqual(body);
  });

  it("puts a configured deployment in `model`, and takes a custom host (dropping the inference API's /models)", async () => {
    const { request, json } = await build({
      apiKey: "k",
      customHost: "https://my-foundry.services.ai.azure.com/models",
      azure: { deploymentId: "ocr-prod" },
    });
    expect(request.url).toBe("https://my-foundry.services.ai.azure.com/providers/mistral/azure/ocr");
    expect(json.model).toBe("ocr-prod");
  });

  it("refuses a resource name that is not a host label", async () => {
    await expect(build({ azure: { resourceName: "evil.com/x" } })).rejects.toMatchObject({ status: 400 });
    await expect(build({})).rejects.toMatchObject({ status: 400, code: "azure_resource_required" });
  });
});
