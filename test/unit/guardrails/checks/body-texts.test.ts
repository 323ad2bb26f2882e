import { describe, expect, it } from "vitest";
import { requestText, requestTexts, responseTexts } from "../../../../core/guardrails/checks/body-texts.ts";

describe("body texts (the webhook's rewrites, read in the order of CheckInput.parts)", () => {
  it("reads every message's text of a chat request, and the last message as its text", () => {
    const body = {
      model: "gpt-4o",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function" }] },
        {
          role: "user",
          content: [
            { type: "text", text: "What is in this picture?" },
            { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
            { type: "text", text: "Answer in French." },
          ],
        },
      ],
    };
    expect(requestTexts(body)).toEqual(["Be brief.", "What is in this picture?", "Answer in French."]);
    expect(requestText(body)).toBe("What is in this picture?\nAnswer in French.");
  });

  it("reads completion prompts and embedding inputs, leaving token arrays", () => {
    expect(requestTexts({ prompt: ["Once upon", "a time"] })).toEqual(["Once upon", "a time"]);
    expect(requestText({ prompt: "Once upon a time" })).toBe("Once upon a time");
    expect(requestTexts({ input: ["first", [101, 102], "second"] })).toEqual(["first", "second"]);
    expect(requestText({ input: ["first", "second"] })).toBe("second");
  });

  it("reads every choice of an answer", () => {
    expect(
      responseTexts({
        choices: [
          { index: 0, message: { role: "assistant", content: "Bonjour." } },
          { index: 1, message: { role: "assistant", content: null, tool_calls: [] } },
          { index: 2, text: "Hello." },
        ],
      }),
    ).toEqual(["Bonjour.", "Hello."]);
    expect(responseTexts({ error: { message: "x" } })).toEqual([]);
  });
});
