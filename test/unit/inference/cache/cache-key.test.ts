import { describe, expect, it } from "vitest";
import { isCacheHit } from "../../../../core/observe/analytics/counting.ts";
import { cacheKey, canonicalBody } from "../../../../core/inference/cache/cache-key.ts";
import { isCompleteAnswer, replayAsSse } from "../../../../core/inference/cache/replay.ts";
import { semanticSplit } from "../../../../core/inference/cache/semantic-split.ts";
import { compileConfig } from "../../../../core/inference/routing/config.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";

const scope = { organisationId: "org", workspaceId: "ws" };

describe("cache keys", () => {
  it("ignore field order, explicit defaults and delivery fields", () => {
    const a = canonicalBody({ model: "m", messages: [{ role: "user", content: "hi" }], temperature: 1, stream: true });
    const b = canonicalBody({ messages: [{ content: "hi", role: "user" }], model: "m", n: 1, user: "u1" });
    expect(a).toBe(b);
    expect(canonicalBody({ model: "m", temperature: 0.5 })).not.toBe(canonicalBody({ model: "m" }));
  });

  it("differ by workspace, organisation, namespace, family and target", () => {
    const key = cacheKey(scope, "chat", ["openai"], "{}");
    expect(cacheKey({ ...scope, workspaceId: "other" }, "chat", ["openai"], "{}")).not.toBe(key);
    expect(cacheKey({ ...scope, organisationId: "other" }, "chat", ["openai"], "{}")).not.toBe(key);
    expect(cacheKey({ ...scope, namespace: "n" }, "chat", ["openai"], "{}")).not.toBe(key);
    expect(cacheKey(scope, "completions", ["openai"], "{}")).not.toBe(key);
    expect(cacheKey(scope, "chat", ["groq"], "{}")).not.toBe(key);
    expect(cacheKey(scope, "chat", ["openai"], "{}")).toBe(key);
  });
});

describe("semantic split", () => {
  it("compares the trailing user messages by meaning and the rest exactly", () => {
    const split = semanticSplit("chat", {
      model: "m",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "first" },
        { role: "user", content: [{ type: "text", text: "second" }] },
      ],
    });
    expect(split?.text).toBe("first\nsecond");
    expect(split?.exact).toContain("be brief");
    expect(split?.exact).not.toContain("second");
    expect(semanticSplit("chat", { model: "m", messages: [{ role: "assistant", content: "x" }] })).toBeUndefined();
    expect(semanticSplit("embeddings", { model: "m", input: "x" })).toBeUndefined();
  });
});

describe("replay", () => {
  const answer = {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };

  it("replays a chat answer as OpenAI chunks, usage only when asked", () => {
    const events = replayAsSse(answer, false).trim().split("\n\n");
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice(6)));
    expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
    expect(chunks.map((chunk) => chunk.choices[0].delta.content ?? "").join("")).toBe("Hello");
    expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
    expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk" && !("usage" in chunk))).toBe(true);
    const withUsage = replayAsSse(answer, true).trim().split("\n\n");
    expect(JSON.parse(withUsage.at(-2)!.slice(6))).toMatchObject({ choices: [], usage: answer.usage });
  });

  it("calls a stream complete only when every choice finished", () => {
    expect(isCompleteAnswer(answer)).toBe(true);
    expect(isCompleteAnswer({ choices: [{ index: 0, message: {}, finish_reason: null }] })).toBe(false);
    expect(isCompleteAnswer({ choices: [] })).toBe(false);
  });
});

describe("cache config and analytics", () => {
  const trusted = parseTrustedHosts(["127.0.0.1"]);
  it("compiles cache settings with inheritance, limits and the embedding target", () => {
    const root = compileConfig(
      {
        cache: { mode: "semantic", maxAge: 60, embedding: { provider: "openai", model: "text-embedding-3-small" } },
        strategy: { mode: "fallback" },
        targets: [{ provider: "openai" }, { provider: "groq", cache: { mode: "simple" } }],
      },
      trusted,
    );
    if (root.kind !== "strategy") throw new Error("expected a strategy");
    expect(root.targets[0]!.settings.cache).toMatchObject({
      mode: "semantic",
      maxAgeSeconds: 60,
      similarityThreshold: 0.95,
    });
    expect(root.targets[0]!.settings.cache?.embedding?.model).toBe("text-embedding-3-small");
    expect(root.targets[1]!.settings.cache).toMatchObject({ mode: "simple" });
    expect(() => compileConfig({ provider: "openai", cache: { mode: "simple", max_age: 10 ** 9 } }, trusted)).toThrow(
      /max_age/,
    );
    expect(() =>
      compileConfig({ provider: "openai", cache: { mode: "simple", similarity_threshold: 2 } }, trusted),
    ).toThrow(/similarity_threshold/);
  });

  it("counts HIT and SEMANTIC HIT as hits", () => {
    expect(["HIT", "SEMANTIC HIT", "MISS", "REFRESH", "DISABLED", undefined].map(isCacheHit)).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
  });
});
