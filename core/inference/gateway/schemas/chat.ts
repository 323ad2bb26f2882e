import * as z from "zod/mini";
import { int } from "../../../http/zod-mini.ts";
import {
  checkStreamOptions,
  logitBias,
  modelName,
  n,
  penalty,
  seed,
  stop,
  streamOptions,
  temperature,
  topP,
  user,
} from "./common.ts";

/**
 * POST /v1/chat/completions (spec 4.2). Unknown fields are kept (loose objects) so they reach
 * OpenAI-compatible providers; message contents are checked for shape, not for every provider's extensions.
 * `z.nullish(x)` is classic zod's `x.nullable().optional()`.
 */

const contentPart = z.looseObject({ type: z.string() });
const content = z.nullable(z.union([z.string(), z.array(contentPart)]));

const toolCall = z.looseObject({
  id: z.string(),
  type: z.optional(z.literal("function")),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

/** One chat message (also what the guardrail invoke endpoint takes as `input`). */
export const chatMessage = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("system"), content, name: z.optional(z.string()) }),
  z.looseObject({ role: z.literal("developer"), content, name: z.optional(z.string()) }),
  z.looseObject({ role: z.literal("user"), content, name: z.optional(z.string()) }),
  z.looseObject({
    role: z.literal("assistant"),
    content: z.optional(content),
    tool_calls: z.optional(z.array(toolCall)),
    function_call: z.nullish(z.looseObject({ name: z.string(), arguments: z.string() })),
  }),
  z.looseObject({ role: z.literal("tool"), content, tool_call_id: z.string() }),
  z.looseObject({ role: z.literal("function"), content, name: z.string() }),
]);

const functionDefinition = z.looseObject({
  name: z.string().check(z.minLength(1)),
  description: z.optional(z.string()),
  parameters: z.optional(z.record(z.string(), z.unknown())),
});

const tool = z.looseObject({ type: z.literal("function"), function: functionDefinition });

const toolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: z.string() }) }),
]);

export const chatCompletionRequest = z
  .looseObject({
    messages: z.array(chatMessage).check(z.minLength(1, "messages must contain at least one message")),
    model: modelName,
    frequency_penalty: z.nullish(penalty),
    presence_penalty: z.nullish(penalty),
    logit_bias: z.nullish(logitBias),
    logprobs: z.nullish(z.boolean()),
    top_logprobs: z.nullish(int(z.minimum(0), z.maximum(20))),
    max_tokens: z.nullish(int(z.minimum(1))),
    max_completion_tokens: z.nullish(int(z.minimum(1))),
    n: z.nullish(n),
    response_format: z.optional(z.looseObject({ type: z.enum(["text", "json_object", "json_schema"]) })),
    seed: z.nullish(seed),
    stop: z.optional(stop),
    stream: z.nullish(z.boolean()),
    stream_options: z.optional(streamOptions),
    thinking: z.optional(
      z.looseObject({ type: z.enum(["enabled", "disabled"]), budget_tokens: z.optional(int(z.minimum(0))) }),
    ),
    temperature: z.nullish(temperature),
    top_p: z.nullish(topP),
    tools: z.optional(z.array(tool).check(z.maxLength(128, "at most 128 tools"))),
    tool_choice: z.optional(toolChoice),
    parallel_tool_calls: z.optional(z.boolean()),
    user: z.optional(user),
    function_call: z.optional(z.union([z.enum(["none", "auto"]), z.looseObject({ name: z.string() })])),
    functions: z.optional(z.array(functionDefinition).check(z.minLength(1), z.maxLength(128, "at most 128 functions"))),
  })
  .check(
    z.superRefine((body, ctx) => {
      if (body.top_logprobs != null && body.logprobs !== true) {
        ctx.addIssue({ code: "custom", path: ["top_logprobs"], message: "top_logprobs requires logprobs to be true" });
      }
      checkStreamOptions(body, ctx);
    }),
  );

export type ChatCompletionRequest = z.infer<typeof chatCompletionRequest>;

/**
 * Deprecated fields mapped to their successors, so providers see one form:
 * functions -> tools, function_call -> tool_choice. (max_tokens stays: providers differ on which they take,
 * and each adapter reads `max_completion_tokens ?? max_tokens`.)
 */
export function normaliseChatRequest(body: ChatCompletionRequest): ChatCompletionRequest {
  if (!body.functions || body.tools) return body;
  const { functions, function_call, ...rest } = body;
  const normalised: ChatCompletionRequest = {
    ...rest,
    tools: functions.map((fn) => ({ type: "function" as const, function: fn })),
  };
  if (function_call !== undefined) {
    normalised.tool_choice =
      typeof function_call === "string" ? function_call : { type: "function", function: { name: function_call.name } };
  }
  return normalised;
}
