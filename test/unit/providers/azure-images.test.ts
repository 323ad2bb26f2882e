import { describe, expect, it } from "vitest";
import { azureOpenAIAdapter } from "../../../core/providers/azure/index.ts";
import type { TransformContext } from "../../../core/providers/types.ts";
import { UploadedFile } from "../../../core/providers/uploaded-file.ts";

function ctx(
  route: TransformContext["route"],
  azure: NonNullable<TransformContext["target"]["azure"]>,
): TransformContext {
  return {
    target: { provider: "azure-openai", apiKey: "azure-key-123", azure: { resourceName: "contoso", ...azure } },
    route,
    stream: false,
    model: "dall-e-3",
    now: 1_700_000_000,
    requestId: "req-1",
    includeUsage: false,
  };
}

describe("Azure OpenAI images", () => {
  it("generations: the deployment URL, GA api-version, api-key header, the OpenAI body", async () => {
    const request = await azureOpenAIAdapter.routes.image_generations!.buildRequest(
      { prompt: "a kite", model: "dall-e-3", size: "1024x1024" },
      ctx("image_generations", { deploymentId: "images-prod" }),
    );
    expect(request.url).toBe(
      "https://contoso.openai.azure.com/openai/deployments/images-prod/images/generations?api-version=2024-10-21",
    );
    expect(request.headers).toMatchObject({ "api-key": "azure-key-123", "content-type": "application/json" });
    expect(request.headers.authorization).toBeUndefined();
    expect(JSON.parse(request.body as string)).toEqual({ prompt: "a kite", model: "dall-e-3", size: "1024x1024" });
  });

  it("edits: multipart at the preview version that has them (or the one configured)", async () => {
    const image = new UploadedFile("cat.png", "image/png", new Uint8Array([1, 2, 3]));
    const route = azureOpenAIAdapter.routes.image_edits!;
    const request = await route.buildRequest(
      { prompt: "a hat", image: [image], model: "gpt-image-1" },
      ctx("image_edits", { deploymentId: "gpt-image" }),
    );
    expect(request.url).toBe(
      "https://contoso.openai.azure.com/openai/deployments/gpt-image/images/edits?api-version=2025-04-01-preview",
    );
    const form = await new Response(request.body as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": request.headers["content-type"]! },
    }).formData();
    expect(form.get("prompt")).toBe("a hat");
    expect((form.get("image[]") as File).size).toBe(3);
    const pinned = await route.buildRequest(
      { prompt: "a hat", image: [image] },
      ctx("image_edits", { deploymentId: "gpt-image", apiVersion: "2025-06-01" }),
    );
    expect(pinned.url).toMatch(/api-version=2025-06-01$/);
  });

  it("has no variations (Azure does not serve them)", () => {
    expect(azureOpenAIAdapter.routes.image_variations).toBeUndefined();
  });
});
