import { describe, expect, it } from "vitest";
import { droppedHistoryHeader, fitHistory } from "../../../../core/inference/formats/history/index.ts";
import { ANTHROPIC_HISTORY, GEMINI_HISTORY } from "../../../../core/providers/types.ts";

const thinking = { type: "thinking", thinking: "Think.", signature: "sig" };

describe("chat history", () => {
  const body = {
    model: "m",
    messages: [
      { role: "user", content: "Hi" },
      {
        role: "assistant",
        content: "Calling.",
        content_blocks: [thinking, { type: "redacted_thinking", data: "x" }],
        tool_calls: [
          {
            id: "c1",
            type: "function",
            function: { name: "f", arguments: "{}" },
            extra_content: { google: { thought_signature: "ts" } },
          },
        ],
      },
    ],
  };

  it("is the same object for a target that keeps what it holds", () => {
    expect(
      fitHistory("chat", body, {
        native: true,
        keeps: new Set([...ANTHROPIC_HISTORY, ...GEMINI_HISTORY]),
        madeHistory: false,
      }).body,
    ).toBe(body);
  });

  it("loses Claude's blocks for a target that is not Claude, and Gemini's signatures for one that is not Gemini", () => {
    const toGemini = fitHistory("chat", body, { native: true, keeps: GEMINI_HISTORY, madeHistory: false });
    expect(toGemini.body.messages[1]).not.toHaveProperty("content_blocks");
    expect(toGemini.body.messages[1].tool_calls[0].extra_content).toEqual({ google: { thought_signature: "ts" } });
    expect(droppedHistoryHeader(toGemini.dropped)).toBe("redacted_thinking=1,thinking_signature=1");
    const toOpenai = fitHistory("chat", body, { native: true, madeHistory: false });
    expect(toOpenai.body.messages[1].tool_calls[0]).not.toHaveProperty("extra_content");
    expect(droppedHistoryHeader(toOpenai.dropped)).toBe("redacted_thinking=1,thinking_signature=1,thought_signature=1");
    expect(body.messages[1]).toHaveProperty("content_blocks");
  });

  it("costs nothing for a conversation without such items", () => {
    const plain = {
      model: "m",
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello" },
      ],
    };
    const fitted = fitHistory("chat", plain, { native: true, madeHistory: false });
    expect(fitted.body).toBe(plain);
    expect(fitted.dropped).toBeUndefined();
  });
});

describe("Messages history", () => {
  const body = {
    system: [{ type: "text", text: "S", cache_control: { type: "ephemeral", ttl: "1h" } }],
    messages: [
      { role: "assistant", content: [thinking, { type: "text", text: "T", cache_control: { type: "ephemeral" } }] },
    ],
  };

  it("native: untouched; translated: thinking and TTL'd breakpoints are counted as dropped", () => {
    expect(fitHistory("messages", body, { native: true, madeHistory: false })).toEqual({ body });
    const translated = fitHistory("messages", body, { native: false, madeHistory: false });
    expect(translated.body).toBe(body);
    expect(droppedHistoryHeader(translated.dropped)).toBe("cache_control_ttl=1,thinking_signature=1");
  });
});

describe("Responses history", () => {
  const input = [
    { type: "message", role: "assistant", content: "Earlier." },
    { type: "reasoning", id: "rs_1", encrypted_content: "sealed" },
    { type: "message", role: "user", content: "Now?" },
    { type: "reasoning", id: "rs_2", encrypted_content: "client's" },
    { type: "item_reference", id: "msg_9" },
  ];
  const body = { model: "m", input };

  it("a translated target loses reasoning and references", () => {
    const fitted = fitHistory("responses", body, { native: false, madeHistory: false }, 2);
    expect(fitted.body.input.map((item: any) => item.type)).toEqual(["message", "message"]);
    expect(droppedHistoryHeader(fitted.dropped)).toBe("encrypted_reasoning=2,item_reference=1");
  });

  it("a native target loses only the stored conversation's sealed reasoning, and only when it did not make it", () => {
    expect(fitHistory("responses", body, { native: true, madeHistory: true }, 2).body).toBe(body);
    const other = fitHistory("responses", body, { native: true, madeHistory: false }, 2);
    expect(other.body.input.map((item: any) => item.id ?? item.type)).toEqual(["message", "message", "rs_2", "msg_9"]);
    expect(droppedHistoryHeader(other.dropped)).toBe("encrypted_reasoning=1");
  });
});
