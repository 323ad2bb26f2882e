import { describe, expect, it } from "vitest";
import { countTokens } from "../../../../core/inference/catalog/tokens.ts";
import { assembleStream } from "../../../../core/inference/gateway/stream/assembly.ts";
import { estimateUsage } from "../../../../core/inference/gateway/usage-estimate.ts";

describe("usage estimation when the provider reports none", () => {
  it("counts the prompt messages and the streamed completion with the tokenizer", async () => {
    const request = { model: "gpt-4o", messages: [{ role: "user", content: "Tell me a story about a fox" }] };
    const streamed = [
      JSON.stringify({ choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }),
      { choices: [{ index: 0, delta: { content: "Once upon a time" } }] },
      JSON.stringify({ choices: [{ index: 0, delta: { content: ", a fox." } }] }),
    ];
    // A stream's answer is counted from what its chunks spell (as the pipeline assembles it for the log).
    const usage = await estimateUsage("chat", request, assembleStream(streamed));
    expect(usage.completion_tokens).toBe(await countTokens("gpt-4o", "Once upon a time, a fox."));
    expect(usage.prompt_tokens).toBeGreaterThan(await countTokens("gpt-4o", "Tell me a story about a fox"));
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it("counts JSON answers including tool-call arguments, and embedding inputs", async () => {
    const body = {
      choices: [
        { message: { content: "ok", tool_calls: [{ function: { name: "f", arguments: '{"city":"Paris"}' } }] } },
      ],
    };
    const chat = await estimateUsage("chat", { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }, body);
    expect(chat.completion_tokens).toBe(await countTokens("gpt-4o", 'ok{"city":"Paris"}'));
    const embeddings = await estimateUsage(
      "embeddings",
      { model: "text-embedding-3-small", input: ["hello world", "again"] },
      {},
    );
    expect(embeddings.prompt_tokens).toBe(await countTokens("text-embedding-3-small", "hello world\nagain"));
  });
});
