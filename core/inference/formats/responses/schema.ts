import * as z from "zod/mini";
import { checkStreamOptions, modelName, penalty, temperature, topP, user } from "../../gateway/schemas/common.ts";
import { int } from "../../../http/zod-mini.ts";

/**
 * POST /v1/responses (OpenAI's Responses API; spec 2.1, 2.8, 8). Unknown fields are kept (loose objects) so that
 * providers with a native Responses API get them; what the chat translation needs is checked for shape. Input
 * items, content parts and tools are told apart by `type` (a message item may omit it), each kind checked with
 * its own schema so a 400 names the exact field (`input[2].call_id`). Item and tool kinds this gateway does not
 * translate (hosted tools and their calls) are accepted as objects: core/inference/formats/responses/to-chat.ts refuses them
 * for translated providers, native ones take them as they are.
 */

/** A schema per `type`, checked in place of one union (whose failure would only say "Invalid input"). */
function byType(
  kinds: Record<string, z.ZodMiniType>,
  what: string,
  options: {
    acceptUnknown: boolean;
    typeOf?: (value: Record<string, unknown>) => string | undefined;
    /** The message when no type can be told. */
    untyped?: string;
  },
) {
  return z.looseObject({}).check(
    z.superRefine((value, ctx) => {
      const type = options.typeOf ? options.typeOf(value) : typeof value.type === "string" ? value.type : undefined;
      if (type === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["type"],
          message: options.untyped ?? `${what} needs a string type`,
          input: value.type,
        });
        return;
      }
      const schema = Object.hasOwn(kinds, type) ? kinds[type] : undefined;
      if (!schema) {
        if (!options.acceptUnknown) {
          const known = Object.keys(kinds).join(", ");
          ctx.addIssue({
            code: "custom",
            path: ["type"],
            message: `unknown ${what} type '${type}' (${known})`,
            input: type,
          });
        }
        return;
      }
      const result = schema.safeParse(value);
      if (result.success) return;
      for (const issue of result.error.issues) {
        ctx.addIssue({ code: "custom", path: issue.path as PropertyKey[], message: issue.message, input: issue.input });
      }
    }),
  );
}

const itemStatus = z.enum(["in_progress", "completed", "incomplete"]);
const imageDetail = z.enum(["low", "high", "auto", "original"]);

const contentParts = {
  input_text: z.looseObject({ type: z.literal("input_text"), text: z.string() }),
  output_text: z.looseObject({
    type: z.literal("output_text"),
    text: z.string(),
    annotations: z.optional(z.array(z.looseObject({}))),
  }),
  refusal: z.looseObject({ type: z.literal("refusal"), refusal: z.string() }),
  input_image: z.looseObject({
    type: z.literal("input_image"),
    image_url: z.nullish(z.string()),
    file_id: z.nullish(z.string()),
    detail: z.optional(imageDetail),
  }),
  input_file: z.looseObject({
    type: z.literal("input_file"),
    file_data: z.optional(z.string()),
    file_id: z.nullish(z.string()),
    file_url: z.optional(z.string()),
    filename: z.optional(z.string()),
  }),
  input_audio: z.looseObject({
    type: z.literal("input_audio"),
    input_audio: z.looseObject({ data: z.string(), format: z.string() }),
  }),
};

/** A content part of a message: OpenAI's kinds are checked; a kind it adds later passes to native providers. */
const contentPart = byType(contentParts, "content part", { acceptUnknown: true });

const messageItem = z.looseObject({
  type: z.optional(z.literal("message")),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: z.union([z.string(), z.array(contentPart)]),
  id: z.optional(z.string()),
  status: z.optional(itemStatus),
});

/** What a function call's output may be: a string, or text, image and file parts. */
const functionOutput = z.union([z.string(), z.array(contentPart)]);

const inputItems = {
  message: messageItem,
  function_call: z.looseObject({
    type: z.literal("function_call"),
    call_id: z.string().check(z.minLength(1)),
    name: z.string().check(z.minLength(1)),
    arguments: z.string(),
    id: z.optional(z.string()),
    status: z.optional(itemStatus),
  }),
  function_call_output: z.looseObject({
    type: z.literal("function_call_output"),
    call_id: z.string().check(z.minLength(1)),
    output: functionOutput,
    id: z.nullish(z.string()),
    status: z.nullish(itemStatus),
  }),
  reasoning: z.looseObject({
    type: z.literal("reasoning"),
    id: z.optional(z.string()),
    summary: z.optional(z.array(z.looseObject({ type: z.string(), text: z.string() }))),
    encrypted_content: z.nullish(z.string()),
  }),
  item_reference: z.looseObject({ type: z.nullish(z.literal("item_reference")), id: z.string() }),
};

/**
 * An input item. A message may omit `type` (EasyInputMessage); an item with neither `type` nor `role` but an
 * `id` is an item reference (its `type` is optional too).
 */
const inputItem = byType(inputItems, "input item", {
  acceptUnknown: true,
  untyped: "an input item needs a type (a message may give a role instead)",
  typeOf: (item) => {
    if (typeof item.type === "string") return item.type;
    if (item.type !== undefined && item.type !== null) return undefined;
    if (item.role !== undefined) return "message";
    if (item.id !== undefined) return "item_reference";
    return undefined;
  },
});

const functionTool = z.looseObject({
  type: z.literal("function"),
  name: z.string().check(z.minLength(1), z.maxLength(128)),
  description: z.nullish(z.string()),
  parameters: z.nullish(z.record(z.string(), z.unknown())),
  strict: z.nullish(z.boolean()),
});

/** Tools: function tools are checked; hosted tools (web search, file search, MCP...) are objects with a type. */
const tool = byType({ function: functionTool }, "tool", { acceptUnknown: true });

const toolChoiceObject = byType(
  { function: z.looseObject({ type: z.literal("function"), name: z.string() }) },
  "tool_choice",
  { acceptUnknown: true },
);
const toolChoiceMode = z.enum(["none", "auto", "required"]);

/** `none`, `auto`, `required`, or an object naming a function or a hosted tool (hosted ones accepted loosely). */
const toolChoice = z.union([toolChoiceMode, toolChoiceObject], {
  error: "expected none, auto, required or an object naming a tool",
});

const textFormat = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text") }),
  z.looseObject({
    type: z.literal("json_schema"),
    name: z.string().check(z.minLength(1), z.maxLength(64)),
    schema: z.record(z.string(), z.unknown()),
    strict: z.nullish(z.boolean()),
    description: z.optional(z.string()),
  }),
  z.looseObject({ type: z.literal("json_object") }),
]);

const reasoningSummary = z.nullish(z.enum(["auto", "concise", "detailed"]));

const reasoning = z.looseObject({
  effort: z.nullish(z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"])),
  summary: reasoningSummary,
  generate_summary: reasoningSummary,
});

/** Spec 2.8: at most 16 pairs, keys of at most 64 characters, string values of at most 512. */
export const METADATA_LIMITS = { pairs: 16, keyLength: 64, valueLength: 512 } as const;

const metadata = z.record(z.string(), z.unknown()).check(
  z.superRefine((pairs, ctx) => {
    const keys = Object.keys(pairs);
    const fail = (message: string) => ctx.addIssue({ code: "custom", message, input: pairs });
    if (keys.length > METADATA_LIMITS.pairs) return fail(`at most ${METADATA_LIMITS.pairs} pairs (got ${keys.length})`);
    for (const key of keys) {
      const value = pairs[key];
      if (key.length > METADATA_LIMITS.keyLength)
        return fail(`keys are at most ${METADATA_LIMITS.keyLength} characters (a key has ${key.length})`);
      if (typeof value !== "string") return fail(`values must be strings (the value of '${key}' is not)`);
      if (value.length > METADATA_LIMITS.valueLength)
        return fail(
          `values are at most ${METADATA_LIMITS.valueLength} characters (the value of '${key}' has ${value.length})`,
        );
    }
  }),
);

export const responsesRequest = z
  .looseObject({
    model: modelName,
    input: z.optional(
      z.union([z.string(), z.array(inputItem)], { error: "expected a string or an array of input items (objects)" }),
    ),
    instructions: z.nullish(z.string()),
    tools: z.optional(z.array(tool)),
    tool_choice: z.optional(toolChoice),
    text: z.optional(
      z.looseObject({ format: z.optional(textFormat), verbosity: z.nullish(z.enum(["low", "medium", "high"])) }),
    ),
    reasoning: z.nullish(reasoning),
    max_output_tokens: z.nullish(int(z.minimum(1))),
    max_tool_calls: z.nullish(int(z.minimum(1))),
    temperature: z.nullish(temperature),
    top_p: z.nullish(topP),
    top_logprobs: z.nullish(int(z.minimum(0), z.maximum(20))),
    presence_penalty: z.nullish(penalty),
    frequency_penalty: z.nullish(penalty),
    truncation: z.nullish(z.enum(["auto", "disabled"])),
    metadata: z.nullish(metadata),
    parallel_tool_calls: z.nullish(z.boolean()),
    store: z.nullish(z.boolean()),
    stream: z.nullish(z.boolean()),
    stream_options: z.nullish(z.looseObject({ include_obfuscation: z.optional(z.boolean()) })),
    background: z.nullish(z.boolean()),
    previous_response_id: z.nullish(z.string().check(z.minLength(1))),
    user: z.optional(user),
    include: z.nullish(z.array(z.string())),
    service_tier: z.nullish(z.string()),
    prompt_cache_key: z.nullish(z.string()),
    prompt_cache_retention: z.nullish(z.enum(["in_memory", "in-memory", "24h"])),
    safety_identifier: z.nullish(z.string()),
  })
  .check(
    z.superRefine((body, ctx) => {
      checkStreamOptions(body, ctx);
      if (body.background === true && body.store === false) {
        ctx.addIssue({ code: "custom", path: ["background"], message: "background mode requires store to be true" });
      }
    }),
  );

export type ResponsesRequest = z.infer<typeof responsesRequest>;
