import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  fromMistralModerationResponse,
  toMistralModerationRequest,
} from "../../../core/providers/mistral/moderations.ts";
import { createCompatibleAdapter } from "../../../core/providers/openai/compatible.ts";
import { COMPATIBLE_PROVIDERS } from "../../../core/providers/openai/table.ts";
import type { TransformContext, UpstreamRequest } from "../../../core/providers/types.ts";
import { OPENAI_MODERATION_CATEGORIES, UpstreamError } from "../../../core/providers/types.ts";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/mistral/${name}`, import.meta.url), "utf8"));

const adapterOf = (id: string) => createCompatibleAdapter(COMPATIBLE_PROVIDERS.find((row) => row.id === id)!);

const ctx = (provider: string, customHost?: string): TransformContext => ({
  target: { provider, apiKey: "sk-mistral-test", customHost },
  route: "moderations",
  stream: false,
  model: "text-moderation-latest",
  now: 1_700_000_000,
  requestId: "modr-1",
  includeUsage: false,
});

describe("Mistral moderations", () => {
  it("sends Mistral's body to /v1/moderations with the key as a bearer token", async () => {
    const request = (await adapterOf("mistral-ai").routes.moderations!.buildRequest(
      { model: "text-moderation-latest", input: ["first", "second"] },
      ctx("mistral-ai"),
    )) as UpstreamRequest;
    expect(request.url).toBe("https://api.mistral.ai/v1/moderations");
    expect(request.headers.authorization).toBe("Bearer sk-mistral-test");
    // OpenAI's default model means Mistral's current moderation model.
    expect(JSON.parse(String(request.body))).toEqual({
      model: "mistral-moderation-latest",
      input: ["first", "second"],
    });
  });

  it("keeps a Mistral model name and turns OpenAI's text parts into strings; refuses image parts", () => {
    expect(toMistralModerationRequest({ model: "mistral-moderation-2411", input: "hello" })).toEqual({
      model: "mistral-moderation-2411",
      input: "hello",
    });
    expect(
      toMistralModerationRequest({ model: "omni-moderation-latest", input: [{ type: "text", text: "a" }] }),
    ).toEqual({ model: "mistral-moderation-latest", input: ["a"] });
    const refused = (() => {
      try {
        toMistralModerationRequest({ input: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] });
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(UpstreamError);
    expect(refused).toMatchObject({ status: 400, param: "input" });
  });

  it("answers OpenAI's moderation shape with all 13 categories and keeps Mistral's under `mistral`", () => {
    const answer = fromMistralModerationResponse(fixture("moderation-response.json")) as any;
    expect(answer).toMatchObject({ id: "4d71ae510af942108ef7344f903e2b88", model: "mistral-moderation-2411" });
    const [result] = answer.results;
    expect(Object.keys(result.categories).sort()).toEqual([...OPENAI_MODERATION_CATEGORIES].sort());
    expect(Object.keys(result.category_scores).sort()).toEqual([...OPENAI_MODERATION_CATEGORIES].sort());
    expect(Object.keys(result.category_applied_input_types).sort()).toEqual([...OPENAI_MODERATION_CATEGORIES].sort());
    expect(result.flagged).toBe(true);
    expect(result.categories.violence).toBe(true);
    expect(result.category_scores.violence).toBe(0.9132);
    expect(result.category_scores.hate).toBe(0.0154);
    expect(result.category_applied_input_types.violence).toEqual(["text"]);
    // Categories Mistral has no counterpart for are false and 0.
    expect(result.categories["harassment/threatening"]).toBe(false);
    expect(result.category_scores["sexual/minors"]).toBe(0);
    expect(result.mistral.categories).toMatchObject({ dangerous_and_criminal_content: true, pii: false });
    expect(result.mistral.category_scores.dangerous_and_criminal_content).toBe(0.6411);
  });

  it("is not flagged when Mistral flags nothing", () => {
    const upstream = fixture("moderation-response.json");
    for (const name of Object.keys(upstream.results[0].categories)) upstream.results[0].categories[name] = false;
    const answer = fromMistralModerationResponse(upstream) as any;
    expect(answer.results[0].flagged).toBe(false);
    expect(Object.values(answer.results[0].categories).every((flag) => flag === false)).toBe(true);
  });

  it("leaves OpenAI's own moderations untouched (pass-through)", async () => {
    const route = adapterOf("openai").routes.moderations!;
    const body = { model: "omni-moderation-latest", input: "hi" };
    const request = (await route.buildRequest(body, ctx("openai"))) as UpstreamRequest;
    expect(request.url).toBe("https://api.openai.com/v1/moderations");
    expect(JSON.parse(String(request.body))).toEqual(body);
    const upstream = { id: "modr-1", model: "omni-moderation-latest", results: [] };
    expect(route.transformResponse(upstream, ctx("openai"))).toBe(upstream);
  });
});
