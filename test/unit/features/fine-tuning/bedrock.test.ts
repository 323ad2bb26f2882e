import { describe, expect, it } from "vitest";
import {
  customModelNameOf,
  exampleOf,
  familyOf,
  jobOf,
} from "../../../../core/features/fine-tuning/providers/bedrock.ts";

const jobArn =
  "arn:aws:bedrock:us-east-1:123456789012:model-customization-job/anthropic.claude-3-haiku-20240307-v1:0:200k/abcdef123456";

const chat = {
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Hi" },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Hel" },
        { type: "text", text: "lo!" },
      ],
    },
    { role: "user", content: "Bye" },
    { role: "assistant", content: "Goodbye!" },
  ],
};

describe("Bedrock customisation jobs in OpenAI's shape", () => {
  it("maps every status", () => {
    const cases: Array<[string, string]> = [
      ["InProgress", "running"],
      ["Stopping", "running"],
      ["Completed", "succeeded"],
      ["Failed", "failed"],
      ["Stopped", "cancelled"],
      ["Validating", "validating_files"],
    ];
    for (const [status, expected] of cases) expect(jobOf({ jobArn, status }).status, status).toBe(expected);
  });

  it("names the custom model only once completed, and carries the failure, end time and hyperparameters", () => {
    const outputModelArn = "arn:aws:bedrock:us-east-1:123456789012:custom-model/x/abc";
    expect(jobOf({ jobArn, status: "InProgress", outputModelArn }).fine_tuned_model).toBeNull();
    expect(
      jobOf({
        jobArn,
        status: "Completed",
        outputModelArn,
        endTime: "2025-01-01T00:00:10Z",
        hyperParameters: { epochCount: "3", batchSize: "8", learningRateMultiplier: "0.5" },
      }),
    ).toMatchObject({
      id: jobArn,
      fine_tuned_model: outputModelArn,
      finished_at: 1735689610,
      hyperparameters: { n_epochs: 3, batch_size: 8, learning_rate_multiplier: 0.5 },
      error: null,
    });
    expect(
      jobOf({ jobArn, status: "Completed", hyperParameters: { learningRate: "0.00002" } }).hyperparameters,
    ).toEqual({ learning_rate_multiplier: 2 });
    expect(jobOf({ jobArn, status: "Failed", failureMessage: "bad data" }).error).toEqual({
      code: "bedrock_job_failed",
      message: "bad data",
      param: null,
    });
    expect(() => jobOf({ status: "InProgress" })).toThrow();
    expect(() => jobOf({ jobArn: "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/x" })).toThrow();
  });
});

describe("Bedrock fine-tuning datasets", () => {
  it("rewrites an OpenAI chat line for Claude 3 Haiku", () => {
    expect(exampleOf("training_file", "claude")(chat, 1)).toEqual({
      system: "Be brief.",
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello!" },
        { role: "user", content: "Bye" },
        { role: "assistant", content: "Goodbye!" },
      ],
    });
  });

  it("rewrites an OpenAI chat line for Nova, and keeps a line already in Nova's format", () => {
    const nova = exampleOf("training_file", "nova");
    expect(nova(chat, 1)).toEqual({
      schemaVersion: "bedrock-conversation-2024",
      system: [{ text: "Be brief." }],
      messages: [
        { role: "user", content: [{ text: "Hi" }] },
        { role: "assistant", content: [{ text: "Hello!" }] },
        { role: "user", content: [{ text: "Bye" }] },
        { role: "assistant", content: [{ text: "Goodbye!" }] },
      ],
    });
    const native = { schemaVersion: "bedrock-conversation-2024", messages: [] };
    expect(nova(native, 1)).toBe(native);
  });

  it("refuses lines Bedrock cannot learn from, naming the param and the line", () => {
    const claude = exampleOf("validation_file", "claude");
    const bad = [
      { prompt: "x", completion: "y" },
      { messages: [{ role: "user", content: "Hi" }] },
      {
        messages: [
          { role: "assistant", content: "Hi" },
          { role: "user", content: "x" },
        ],
      },
      {
        messages: [
          { role: "user", content: "Hi" },
          { role: "user", content: "again" },
          { role: "assistant", content: "x" },
        ],
      },
      {
        messages: [
          { role: "user", content: [{ type: "image_url", image_url: { url: "https://x" } }] },
          { role: "assistant", content: "x" },
        ],
      },
      {
        messages: [
          { role: "user", content: "Hi" },
          { role: "assistant", tool_calls: [{ id: "c" }], content: "" },
        ],
      },
      {
        messages: [
          { role: "user", content: "Hi" },
          { role: "tool", content: "x" },
        ],
      },
    ];
    for (const line of bad) {
      expect(() => claude(line, 7), JSON.stringify(line)).toThrow(
        expect.objectContaining({ status: 400, param: "validation_file", message: expect.stringContaining("line 7") }),
      );
    }
  });

  it("knows the families it can write data for", () => {
    expect(familyOf("anthropic.claude-3-haiku-20240307-v1:0:200k")).toBe("claude");
    expect(familyOf("amazon.nova-micro-v1:0:128k")).toBe("nova");
    expect(familyOf("arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-lite-v1:0:300k")).toBe("nova");
    for (const model of ["amazon.titan-text-express-v1:0:8k", "meta.llama3-1-8b-instruct-v1:0:128k", "gpt-4o"]) {
      expect(() => familyOf(model), model).toThrow(expect.objectContaining({ status: 400, param: "model" }));
    }
  });

  it("names the custom model within Bedrock's rules", () => {
    const pattern = /^([0-9a-zA-Z][_-]?){1,63}$/;
    const named = customModelNameOf("anthropic.claude-3-haiku-20240307-v1:0:200k", "support bot", "ftjob-1");
    expect(named).toBe("anthropic-claude-3-haiku-20240307-v1-support-bot");
    expect(customModelNameOf("amazon.nova-micro-v1:0:128k", null, "ftjob-abc_1")).toBe("ftjob-abc-1");
    const long = customModelNameOf("amazon.nova-micro-v1:0:128k", "x".repeat(64), "j");
    expect(long.length).toBeLessThanOrEqual(63);
    for (const name of [named, long]) expect(name).toMatch(pattern);
  });
});
