import * as z from "zod";
import { logitBias, n, penalty, seed, stop, streamOptions, temperature, topP, user } from "./common.ts";

/**
 * POST /v1/chat/completions (spec 4.2). Unknown fields are kept (loose objects) so they reach
 * OpenAI-compatible providers; message contents are checked for shape, not for every provider's extensions.
 */

const contentPart = z.looseObject({ type: z.string() });
const content = z.union([z.string(), z.array(contentPart)]).nullable();

const toolCall = z.looseObject({
  id: z.string(),
  type: z.literal("function").optional(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const message = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("system"), content, name: z.string().optional() }),
  z.looseObject({ role: z.literal("developer"), content, name: z.string().optional() }),
  z.looseObject({ role: z.literal("user"), content, name: z.string().optional() }),
  z.looseObject({
    role: z.literal("assistant"),
    content: content.optional(),
    tool_calls: z.array(toolCall).optional(),
    function_call: z.looseObject({ name: z.string(), arguments: z.string() }).nullable().optional(),
  }),
  z.looseObject({ role: z.literal("tool"), content, tool_call_id: z.string() }),
  z.looseObject({ role: z.literal("function"), content, name: z.string() }),
]);

const functionDefinition = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
});

const tool = z.looseObject({ type: z.literal("function"), function: functionDefinition });

const toolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: z.string() }) }),
]);

export const chatCompletionRequest = z
  .looseObject({
    messages: z.array(message).min(1, "messages must contain at least one message"),
    model: z.string().min(1),
    frequency_penalty: penalty.nullable().optional(),
    presence_penalty: penalty.nullable().optional(),
    logit_bias: logitBias.nullable().optional(),
    logprobs: z.boolean().nullable().optional(),
    top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
    max_tokens: z.number().int().min(1).nullable().optional(),
    max_completion_tokens: z.number().int().min(1).nullable().optional(),
    n: n.nullable().optional(),
    response_format: z.looseObject({ type: z.enum(["text", "json_object", "json_schema"]) }).optional(),
    seed: seed.nullable().optional(),
    stop: stop.optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: streamOptions.optional(),
    thinking: z
      .looseObject({ type: z.enum(["enabled", "disabled"]), budget_tokens: z.number().int().min(0).optional() })
      .optional(),
    temperature: temperature.nullable().optional(),
    top_p: topP.nullable().optional(),
    tools: z.array(tool).max(128, "at most 128 tools").optional(),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().optional(),
    user: user.optional(),
    function_call: z.union([z.enum(["none", "auto"]), z.looseObject({ name: z.string() })]).optional(),
    functions: z.array(functionDefinition).min(1).max(128, "at most 128 functions").optional(),
  })
  .superRefine((body, ctx) => {
    if (body.top_logprobs != null && body.logprobs !== true) {
      ctx.addIssue({ code: "custom", path: ["top_logprobs"], message: "top_logprobs requires logprobs to be true" });
    }
    if (body.stream_options && body.stream !== true) {
      ctx.addIssue({
        code: "custom",
        path: ["stream_options"],
        message: "stream_options is only allowed when stream is true",
      });
    }
  });

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
