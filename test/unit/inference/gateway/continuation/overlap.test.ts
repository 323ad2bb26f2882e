import { describe, expect, it } from "vitest";
import { OverlapTrimmer } from "../../../../../core/inference/gateway/continuation/overlap.ts";
import {
  CONTINUE_INSTRUCTION,
  continuationRequest,
} from "../../../../../core/inference/gateway/continuation/request.ts";
import { addCost, addUsage } from "../../../../../core/inference/gateway/continuation/legs.ts";

/** The continuation as the client gets it, fed in pieces. */
function trimmed(partial: string, pieces: string[]): string {
  const trimmer = new OverlapTrimmer(partial);
  return pieces.map((piece) => trimmer.push(piece)).join("") + trimmer.end();
}

describe("the overlap trimmer", () => {
  it("passes a continuation that picks up where the answer stopped", () => {
    expect(trimmed("The quick bro", ["wn ", "fox."])).toBe("wn fox.");
  });

  it("cuts a restarted word, or several, however the pieces fall", () => {
    expect(trimmed("The quick bro", ["brown fox."])).toBe("wn fox.");
    expect(trimmed("The quick bro", ["b", "r", "own", " fox."])).toBe("wn fox.");
    expect(trimmed("The quick bro", ["quick ", "brown fox."])).toBe("wn fox.");
    expect(trimmed("The quick bro", ["The quick brown fox."])).toBe("wn fox.");
  });

  it("does not cut what only looks like a repeat inside a word", () => {
    expect(trimmed("Hello", ["o world"])).toBe("o world");
    expect(trimmed("I like bro", ["ccoli."])).toBe("ccoli.");
  });

  it("drops a leading space when the answer already ends with one (a prefill is sent trimmed)", () => {
    expect(trimmed("The quick ", [" brown"])).toBe("brown");
    expect(trimmed("The quick ", ["quick brown"])).toBe("brown");
  });

  it("releases what it held when the continuation ends early", () => {
    expect(trimmed("The quick bro", ["br"])).toBe("br");
    expect(trimmed("The quick bro", ["q"])).toBe("q");
  });
});

describe("the continuation request", () => {
  const chat = {
    model: "m",
    messages: [{ role: "user", content: "Hi" }],
    n: 1,
    reasoning_effort: "high",
    max_tokens: 100,
    tools: [{ type: "function", function: { name: "f" } }],
    tool_choice: "required",
  };

  it("asks a prefill target to continue the partial answer as the last assistant turn (trailing space cut)", () => {
    const body = continuationRequest({ chat, partial: "The quick ", prefill: true, spentTokens: 30 });
    expect(body.messages).toEqual([...chat.messages, { role: "assistant", content: "The quick" }]);
    expect(body).toMatchObject({ stream: true, stream_options: { include_usage: true }, tool_choice: "none" });
    expect(body.max_tokens).toBe(70);
    expect(body).not.toHaveProperty("n");
    expect(body).not.toHaveProperty("reasoning_effort");
    expect(chat.messages).toHaveLength(1);
  });

  it("tells any other target to go on, after the partial answer", () => {
    const body = continuationRequest({ chat, partial: "The quick bro", prefill: false, spentTokens: 0 });
    expect(body.messages.slice(-2)).toEqual([
      { role: "assistant", content: "The quick bro" },
      { role: "user", content: CONTINUE_INSTRUCTION },
    ]);
  });

  it("with nothing said yet, is the request itself", () => {
    const body = continuationRequest({ chat, partial: "", prefill: false, spentTokens: 0 });
    expect(body.messages).toEqual(chat.messages);
  });
});

describe("legs add up", () => {
  it("usage and cost, details included; unpriced when a leg is", () => {
    const a = {
      prompt_tokens: 10,
      completion_tokens: 2,
      total_tokens: 12,
      prompt_tokens_details: { cached_tokens: 4 },
    };
    const b = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 };
    expect(addUsage(a, b)).toEqual({
      prompt_tokens: 30,
      completion_tokens: 7,
      total_tokens: 37,
      prompt_tokens_details: { cached_tokens: 4 },
    });
    expect(
      addCost({ total: 1, input: 0.5, output: 0.5, priced: true }, { total: 2, input: 1, output: 1, priced: true }),
    ).toEqual({ total: 3, input: 1.5, output: 1.5, priced: true });
    expect(
      addCost({ total: 1, input: 1, output: 0, priced: true }, { total: 0, input: 0, output: 0, priced: false })
        ?.priced,
    ).toBe(false);
  });
});
