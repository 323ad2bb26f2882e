import { describe, expect, it } from "vitest";
import { phaseTexts } from "../../../../core/inference/guardrails/texts.ts";

describe("input texts", () => {
  const chat = {
    model: "gpt-4o-mini",
    messages: [
      { role: "system", content: "You are terse." },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function" }] },
      {
        role: "user",
        content: [
          { type: "text", text: "Mail me at ann@example.com" },
          { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
          { type: "text", text: "or call +44 20 7946 0958" },
        ],
      },
    ],
  };

  it("chat: every message's text parts in order; the judged text is the last message's, joined", () => {
    const texts = phaseTexts("chat", "input", chat);
    expect(texts.parts).toEqual(["You are terse.", "Mail me at ann@example.com", "or call +44 20 7946 0958"]);
    expect(texts.text).toBe("Mail me at ann@example.com\nor call +44 20 7946 0958");
    expect(texts.textOf(["a", "b", "c"])).toBe("b\nc");
  });

  it("chat: a rewrite lands in a copy, each text in its place, the rest shared", () => {
    const texts = phaseTexts("chat", "input", chat);
    const rewritten = texts.rewrite(chat, ["You are terse.", "Mail me at [EMAIL]", "or call [PHONE]"]) as any;
    expect(rewritten.messages[2].content[0]).toEqual({ type: "text", text: "Mail me at [EMAIL]" });
    expect(rewritten.messages[2].content[1]).toBe(chat.messages[2]!.content![1]);
    expect(rewritten.messages[2].content[2].text).toBe("or call [PHONE]");
    // Untouched messages are the same objects; the original body is unchanged.
    expect(rewritten.messages[0]).toBe(chat.messages[0]);
    expect(rewritten.messages[1]).toBe(chat.messages[1]);
    expect((chat.messages[2]!.content as any)[0].text).toBe("Mail me at ann@example.com");
    expect(phaseTexts("chat", "input", rewritten).text).toBe("Mail me at [EMAIL]\nor call [PHONE]");
  });

  it("chat: a string content is rewritten in place of the string", () => {
    const body = { messages: [{ role: "user", content: "my card is 4111 1111 1111 1111" }] };
    const rewritten = phaseTexts("chat", "input", body).rewrite(body, ["my card is [CARD]"]) as any;
    expect(rewritten.messages[0].content).toBe("my card is [CARD]");
    expect(body.messages[0]!.content).toBe("my card is 4111 1111 1111 1111");
  });

  it("completions: each string of the prompt; judged: all of them", () => {
    expect(phaseTexts("completions", "input", { prompt: "Say hi" }).text).toBe("Say hi");
    const texts = phaseTexts("completions", "input", { prompt: ["one", "two"] });
    expect(texts.parts).toEqual(["one", "two"]);
    expect(texts.text).toBe("one\ntwo");
    // Token arrays are not text.
    expect(phaseTexts("completions", "input", { prompt: [1, 2, 3] }).parts).toEqual([]);
  });

  it("embeddings: each string input; judged: the last", () => {
    const texts = phaseTexts("embeddings", "input", { input: ["first", "second"] });
    expect(texts.parts).toEqual(["first", "second"]);
    expect(texts.text).toBe("second");
    const rewritten = texts.rewrite({ input: ["first", "second"] }, ["first", "[X]"]);
    expect(rewritten.input).toEqual(["first", "[X]"]);
  });

  it("refuses a rewrite that changes the number of texts", () => {
    const body = { messages: [{ role: "user", content: "hello" }] };
    expect(() => phaseTexts("chat", "input", body).rewrite(body, ["a", "b"])).toThrow(/number of texts/);
  });
});

describe("output texts", () => {
  it("chat: each choice's content; judged: the first choice", () => {
    const answer = {
      id: "chatcmpl-1",
      choices: [
        { index: 0, message: { role: "assistant", content: "First answer" }, finish_reason: "stop" },
        { index: 1, message: { role: "assistant", content: "Second answer" }, finish_reason: "stop" },
      ],
    };
    const texts = phaseTexts("chat", "output", answer);
    expect(texts.parts).toEqual(["First answer", "Second answer"]);
    expect(texts.text).toBe("First answer");
    const rewritten = texts.rewrite(answer, ["[REDACTED]", "Second answer"]) as any;
    expect(rewritten.choices[0].message.content).toBe("[REDACTED]");
    expect(rewritten.choices[1]).toBe(answer.choices[1]);
    expect(answer.choices[0]!.message.content).toBe("First answer");
  });

  it("chat: a tool call answer has no text", () => {
    const answer = { choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [] } }] };
    const texts = phaseTexts("chat", "output", answer);
    expect(texts.parts).toEqual([]);
    expect(texts.text).toBe("");
  });

  it("completions: each choice's text", () => {
    const texts = phaseTexts("completions", "output", { choices: [{ index: 0, text: " world" }] });
    expect(texts.parts).toEqual([" world"]);
    expect(texts.text).toBe(" world");
  });
});
