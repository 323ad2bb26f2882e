import * as z from "zod/mini";
import { int } from "../../../http/zod-mini.ts";
import { modelName, topP } from "../../gateway/schemas/common.ts";

/**
 * POST /v1/messages and POST /v1/messages/count_tokens (Anthropic's Messages API). Objects are loose: fields
 * this schema does not name (container, mcp_servers, context_management, ...) reach native providers as they
 * are. Known content blocks are checked for their own fields; block kinds added to the API later pass with
 * just a `type` (the chat translation refuses what it cannot carry).
 */

const cacheControl = z.optional(z.nullable(z.looseObject({ type: z.string() })));

const imageSource = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("base64"), media_type: z.string(), data: z.string() }),
  z.looseObject({ type: z.literal("url"), url: z.string() }),
  z.looseObject({ type: z.literal("file"), file_id: z.string() }),
]);

const textBlock = z.looseObject({ type: z.literal("text"), text: z.string(), cache_control: cacheControl });
const imageBlock = z.looseObject({ type: z.literal("image"), source: imageSource, cache_control: cacheControl });

/** The kinds of blocks whose fields are checked; other kinds only need a string `type`. */
const KNOWN_BLOCKS: Record<string, z.ZodMiniType> = {
  text: textBlock,
  image: imageBlock,
  document: z.looseObject({
    type: z.literal("document"),
    source: z.looseObject({ type: z.string() }),
    title: z.nullish(z.string()),
    context: z.nullish(z.string()),
  }),
  tool_use: z.looseObject({
    type: z.literal("tool_use"),
    id: z.string(),
    name: z.string(),
    input: z.record(z.string(), z.unknown()),
  }),
  tool_result: z.looseObject({
    type: z.literal("tool_result"),
    tool_use_id: z.string(),
    content: z.optional(z.union([z.string(), z.array(z.looseObject({ type: z.string() }))])),
    is_error: z.optional(z.boolean()),
  }),
  thinking: z.looseObject({ type: z.literal("thinking"), thinking: z.string(), signature: z.optional(z.string()) }),
  redacted_thinking: z.looseObject({ type: z.literal("redacted_thinking"), data: z.string() }),
};

/** One content block: a known kind is checked with its own schema, and its issues keep their exact paths. */
const contentBlock = z.looseObject({ type: z.string() }).check(
  z.superRefine((block, ctx) => {
    const schema = KNOWN_BLOCKS[block.type];
    if (!schema) return;
    const result = schema.safeParse(block);
    if (result.success) return;
    for (const issue of result.error.issues) {
      ctx.addIssue({ code: "custom", path: issue.path as PropertyKey[], message: issue.message });
    }
  }),
);

const message = z.looseObject({
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string(), z.array(contentBlock)]),
});

const system = z.union([z.string(), z.array(textBlock)]);

/**
 * A tool: a custom tool (no `type`, or `custom`) needs an `input_schema`; a server tool (`web_search_20250305`,
 * `bash_20250124`, ...) is accepted with its name and type and forwarded natively.
 */
const tool = z
  .looseObject({
    type: z.optional(z.nullable(z.string())),
    name: z.string().check(z.minLength(1)),
    description: z.optional(z.string()),
    input_schema: z.optional(z.record(z.string(), z.unknown())),
    cache_control: cacheControl,
  })
  .check(
    z.superRefine((value, ctx) => {
      if ((value.type == null || value.type === "custom") && !value.input_schema) {
        ctx.addIssue({ code: "custom", path: ["input_schema"], message: "a custom tool needs an input_schema" });
      }
    }),
  );

const toolChoice = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("auto"), disable_parallel_tool_use: z.optional(z.boolean()) }),
  z.looseObject({ type: z.literal("any"), disable_parallel_tool_use: z.optional(z.boolean()) }),
  z.looseObject({ type: z.literal("tool"), name: z.string(), disable_parallel_tool_use: z.optional(z.boolean()) }),
  z.looseObject({ type: z.literal("none") }),
]);

/** `enabled` with a budget (at least 1024, Anthropic's minimum), `disabled`, or `adaptive` (newer models). */
const thinking = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("enabled"), budget_tokens: int(z.minimum(1024)) }),
  z.looseObject({ type: z.literal("disabled") }),
  z.looseObject({ type: z.literal("adaptive") }),
]);

/** Fields of both bodies: what the model reads as input. */
const inputFields = {
  model: modelName,
  messages: z.array(message).check(z.minLength(1, "messages must contain at least one message")),
  system: z.optional(system),
  tools: z.optional(z.array(tool)),
  tool_choice: z.optional(toolChoice),
  thinking: z.optional(thinking),
};

export const messagesRequest = z.looseObject({
  ...inputFields,
  max_tokens: int(z.minimum(1)),
  stop_sequences: z.optional(z.array(z.string())),
  stream: z.optional(z.boolean()),
  temperature: z.optional(z.number().check(z.minimum(0), z.maximum(1))),
  top_p: z.optional(topP),
  top_k: z.optional(int(z.minimum(0))),
  metadata: z.optional(z.looseObject({ user_id: z.nullish(z.string().check(z.maxLength(256))) })),
  service_tier: z.optional(z.enum(["auto", "standard_only"])),
});

export const countTokensRequest = z.looseObject(inputFields);

export type MessagesRequest = z.infer<typeof messagesRequest>;
export type CountTokensRequest = z.infer<typeof countTokensRequest>;
