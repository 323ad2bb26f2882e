import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type TransformContext, UpstreamError } from "../../../core/providers/types.ts";
import { vertexAdapter } from "../../../core/providers/vertex/index.ts";
import { parseSse } from "../../mocks/anthropic.ts";

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/vertex/${name}`, import.meta.url), "utf8");

function context(overrides: Partial<TransformContext> = {}): TransformContext {
  return {
    target: {
      provider: "vertex-ai",
      apiKey: "ya29.given-token",
      vertex: { projectId: "my-project", region: "europe-west1" },
      forwardHeaders: { "anthropic-beta": "context-1m-2025-08-07" },
    },
    route: "messages",
    stream: false,
    model: "claude-sonnet-4@20250514",
    now: 1_700_000_000,
    requestId: "req-vertex",
    includeUsage: false,
    ...overrides,
  };
}

const route = vertexAdapter.routes.messages!;
const body = {
  model: "claude-sonnet-4@20250514",
  max_tokens: 256,
  messages: [{ role: "user", content: "Bonjour" }],
  stream: true,
};

describe("vertex: native messages route (rawPredict)", () => {
  it.each([
    ["claude-sonnet-4@20250514", true],
    ["claude-3-5-haiku@20241022", true],
    ["gemini-2.5-flash", false],
  ])("supportsModel(%s) is %s", (model, native) => {
    expect(route.supportsModel?.(model)).toBe(native);
  });

  it("posts to rawPredict with anthropic_version in the body and no model", async () => {
    const request = await route.buildRequest(body, context());
    expect(request.url).toBe(
      "https://europe-west1-aiplatform.googleapis.com/v1/projects/my-project/locations/europe-west1/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict",
    );
    expect(request.headers).toMatchObject({
      authorization: "Bearer ya29.given-token",
      "content-type": "application/json",
      "anthropic-beta": "context-1m-2025-08-07",
    });
    expect(JSON.parse(String(request.body))).toEqual({
      anthropic_version: "vertex-2023-10-16",
      max_tokens: 256,
      messages: body.messages,
    });
  });

  it("streams through streamRawPredict with stream: true", async () => {
    const request = await route.buildRequest(body, context({ stream: true }));
    expect(request.url).toMatch(/\/publishers\/anthropic\/models\/claude-sonnet-4@20250514:streamRawPredict$/);
    expect(JSON.parse(String(request.body))).toMatchObject({ anthropic_version: "vertex-2023-10-16", stream: true });
    expect(JSON.parse(String(request.body)).model).toBeUndefined();
  });

  it("returns the Message as it is", () => {
    const message = JSON.parse(fixture("anthropic-raw-predict.json"));
    expect(route.transformResponse(message, context())).toEqual(JSON.parse(fixture("anthropic-raw-predict.json")));
    expect(() =>
      route.transformResponse({ type: "error", error: { type: "rate_limit_error", message: "Slow down" } }, context()),
    ).toThrow(UpstreamError);
  });

  it("passes the SSE events on as they are", () => {
    const events = parseSse(fixture("anthropic-stream-raw-predict.sse"));
    const transformer = route.stream!.createTransformer(context({ stream: true }));
    const out = [...events.flatMap((event) => transformer.push(event)), ...transformer.end()];
    expect(out).toEqual(events.map((event) => JSON.parse(event.data)));
    expect(out.map((event: any) => event.type)).toContain("ping");
  });
});
