import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { estimateInputTokens, messagesFormat } from "../../../../core/inference/formats/messages/index.ts";
import { countChatPromptTokens, countTokens } from "../../../../core/inference/catalog/tokens.ts";

const anthropic = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../../fixtures/anthropic/${name}`, import.meta.url), "utf8"));

describe("messages texts for guardrails", () => {
  it("finds the system prompt and every message's texts; judges the last message", () => {
    const found = messagesFormat.inputTexts({
      system: "Be kind.",
      messages: [
        { role: "user", content: "First" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Reply" },
            { type: "tool_use", id: "t", name: "f", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t", content: "not a slot" },
            { type: "text", text: "Second" },
            { type: "image", source: { type: "url", url: "https://x" } },
            { type: "text", text: "Third" },
          ],
        },
      ],
    });
    expect(found.slots).toEqual([
      { path: ["system"], text: "Be kind." },
      { path: ["messages", 0, "content"], text: "First" },
      { path: ["messages", 1, "content", 0, "text"], text: "Reply" },
      { path: ["messages", 2, "content", 1, "text"], text: "Second" },
      { path: ["messages", 2, "content", 3, "text"], text: "Third" },
    ]);
    expect(found.judged).toEqual({ from: 3, to: 5 });
  });

  it("addresses system text blocks by index", () => {
    const found = messagesFormat.inputTexts({
      system: [
        { type: "text", text: "A" },
        { type: "text", text: "B" },
      ],
      messages: [{ role: "user", content: "Q" }],
    });
    expect(found.slots.map((slot) => slot.path)).toEqual([
      ["system", 0, "text"],
      ["system", 1, "text"],
      ["messages", 0, "content"],
    ]);
    expect(found.judged).toEqual({ from: 2, to: 3 });
  });

  it("judges nothing when the last message has no text", () => {
    const found = messagesFormat.inputTexts({
      messages: [
        { role: "user", content: "Q" },
        { role: "user", content: [{ type: "image", source: { type: "url", url: "https://x" } }] },
      ],
    });
    expect(found.judged).toEqual({ from: 1, to: 1 });
  });

  it("finds each text block of an answer, all judged", () => {
    const found = messagesFormat.outputTexts(anthropic("message-thinking.json"));
    expect(found.slots).toEqual([{ path: ["content", 2, "text"], text: "27 × 453 = 12,231." }]);
    expect(found.judged).toEqual({ from: 0, to: 1 });
  });
});

describe("count_tokens estimate", () => {
  const body = {
    model: "claude-sonnet-4-5",
    system: "You are a weather bot.",
    messages: [{ role: "user", content: "Weather in Paris?" }],
  };

  it("counts the translated prompt", async () => {
    const expected = await countChatPromptTokens("claude-sonnet-4-5", [
      { role: "system", content: "You are a weather bot." },
      { role: "user", content: "Weather in Paris?" },
    ]);
    expect(await estimateInputTokens(body)).toBe(expected);
    expect(expected).toBeGreaterThan(10);
  });

  it("adds the tool definitions' JSON, server tools included", async () => {
    const tools = [
      {
        name: "get_weather",
        description: "Current weather",
        input_schema: { type: "object", properties: { city: { type: "string" } } },
      },
      { type: "web_search_20250305", name: "web_search" },
    ];
    const withTools = await estimateInputTokens({ ...body, tools, tool_choice: { type: "auto" } });
    expect(withTools).toBe(
      (await estimateInputTokens(body)) + (await countTokens("claude-sonnet-4-5", JSON.stringify(tools))),
    );
  });
});
