import { badRequest } from "../../../http/errors.ts";

/**
 * A validated Responses request (schema.ts) -> a chat completions body for the same model, for providers without
 * a native Responses API. The gateway resolves `previous_response_id` before this runs (the stored conversation is
 * prepended to `input`), so what is left to translate is the body itself. What chat cannot express is refused
 * with a 400 naming the field: hosted tools and their items need OpenAI's servers, item references need stored
 * items, and reasoning items are dropped (chat has no way to send them back).
 */

type Json = Record<string, any>;
type ChatMessage = Json;

const NATIVE_ONLY = "only available on providers with a native Responses API";

/** Fields of a Responses request that are the gateway's or have no chat counterpart: never sent as they are. */
const NOT_FORWARDED = new Set([
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "text",
  "reasoning",
  "max_output_tokens",
  "max_tool_calls",
  "top_logprobs",
  "truncation",
  "metadata",
  "store",
  "stream",
  "stream_options",
  "background",
  "previous_response_id",
  "include",
  "prompt_cache_retention",
  "prompt_cache_options",
  "context_management",
  "moderation",
  "image",
  "access_programs",
]);

/** Responses features that depend on OpenAI's server-side state: refused rather than silently ignored. */
const STATEFUL_FIELDS = ["conversation", "prompt"] as const;

/** Fields whose chat counterpart has the same name and meaning. */
const SAME_NAME = [
  "temperature",
  "top_p",
  "parallel_tool_calls",
  "user",
  "service_tier",
  "prompt_cache_key",
  "safety_identifier",
] as const;

const KNOWN_FIELDS = new Set<string>([...NOT_FORWARDED, ...STATEFUL_FIELDS, ...SAME_NAME]);

export function responsesToChat(body: Json): Json {
  for (const field of STATEFUL_FIELDS) {
    if (body[field] !== undefined && body[field] !== null) {
      throw badRequest(`'${field}' is ${NATIVE_ONLY}.`, field, "unsupported_parameter");
    }
  }
  const chat: Json = { model: body.model, messages: toMessages(body) };

  // tool_choice and parallel_tool_calls mean nothing without tools, and chat providers refuse them alone (Responses
  // clients such as agent SDKs send them on every request).
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  if (hasTools) chat.tools = body.tools.map(toChatTool);
  if (hasTools && body.tool_choice !== undefined) chat.tool_choice = toChatToolChoice(body.tool_choice);

  const responseFormat = toResponseFormat(body.text?.format);
  if (responseFormat) chat.response_format = responseFormat;
  if (typeof body.text?.verbosity === "string") chat.verbosity = body.text.verbosity;
  if (typeof body.reasoning?.effort === "string") chat.reasoning_effort = body.reasoning.effort;
  if (typeof body.max_output_tokens === "number") chat.max_completion_tokens = body.max_output_tokens;

  for (const field of SAME_NAME) {
    if (body[field] === undefined || body[field] === null) continue;
    if (field === "parallel_tool_calls" && !hasTools) continue;
    chat[field] = body[field];
  }
  const wantsLogprobs =
    (typeof body.top_logprobs === "number" && body.top_logprobs > 0) ||
    (Array.isArray(body.include) && body.include.includes("message.output_text.logprobs"));
  if (wantsLogprobs) {
    chat.logprobs = true;
    if (typeof body.top_logprobs === "number" && body.top_logprobs > 0) chat.top_logprobs = body.top_logprobs;
  }
  if (body.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  // Fields this module does not know (provider extensions such as `top_k`) reach the chat adapter, as they would
  // from a chat client.
  for (const [key, value] of Object.entries(body)) {
    if (!KNOWN_FIELDS.has(key) && !(key in chat)) chat[key] = value;
  }
  return chat;
}

function toMessages(body: Json): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (typeof body.instructions === "string" && body.instructions !== "") {
    messages.push({ role: "system", content: body.instructions });
  }
  const input = body.input;
  if (typeof input === "string") {
    messages.push({ role: "user", content: input });
  } else if (Array.isArray(input)) {
    // The assistant message that the next function calls join: in chat, an assistant turn's text and the calls it
    // makes are one message.
    let assistantTurn: ChatMessage | undefined;
    input.forEach((item: Json, index: number) => {
      const type = itemType(item);
      if (type === "reasoning") return; // chat cannot carry reasoning back to the model
      if (type === "function_call") {
        const call = { id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } };
        if (assistantTurn) {
          assistantTurn.tool_calls ??= [];
          assistantTurn.tool_calls.push(call);
        } else {
          assistantTurn = { role: "assistant", content: null, tool_calls: [call] };
          messages.push(assistantTurn);
        }
        return;
      }
      const message = toChatMessageOf(item, type, index);
      messages.push(message);
      assistantTurn = message.role === "assistant" ? message : undefined;
    });
  }
  if (messages.length === 0) {
    throw badRequest(
      "'input' is required: give the text or the items the model should answer.",
      "input",
      "missing_required_parameter",
    );
  }
  return messages;
}

/** The kind of an input item: messages may omit `type`; an untyped item with only an id is an item reference. */
function itemType(item: Json): string {
  if (typeof item.type === "string") return item.type;
  if (item.role !== undefined) return "message";
  return "item_reference";
}

/** A message or a function call output as a chat message; any other kind is refused. */
function toChatMessageOf(item: Json, type: string, index: number): ChatMessage {
  switch (type) {
    case "message":
      return toChatMessage(item, index);
    case "function_call_output":
      return { role: "tool", tool_call_id: item.call_id, content: toolOutputText(item.output, index) };
    case "item_reference":
      throw badRequest(
        `input[${index}] is an item reference ('${item.id}'); item references are ${NATIVE_ONLY} (send the item itself, or use previous_response_id).`,
        "input",
        "unsupported_value",
      );
    default:
      throw badRequest(
        `Input items of type '${type}' (input[${index}]) are ${NATIVE_ONLY}.`,
        "input",
        "unsupported_value",
      );
  }
}

function toChatMessage(item: Json, index: number): ChatMessage {
  const role: string = item.role;
  if (typeof item.content === "string") return { role, content: item.content };
  const parts: Json[] = (item.content as Json[]).map((part, partIndex) => toChatPart(part, role, index, partIndex));
  const allText = parts.every((part) => part.type === "text");
  if (allText && (parts.length <= 1 || role === "assistant")) {
    // One text is sent as a string (every provider takes it); an assistant turn is one text in chat.
    return { role, content: parts.map((part) => part.text).join("") };
  }
  return { role, content: parts };
}

function toChatPart(part: Json, role: string, index: number, partIndex: number): Json {
  const where = `input[${index}].content[${partIndex}]`;
  switch (part.type) {
    case "input_text":
    case "output_text":
      return { type: "text", text: part.text };
    case "refusal":
      return { type: "text", text: part.refusal };
    case "input_image": {
      if (typeof part.image_url !== "string" || part.image_url === "") {
        throw badRequest(
          `${where}: images given by file_id are ${NATIVE_ONLY}; send image_url (a URL or a data URL).`,
          "input",
          "unsupported_value",
        );
      }
      const image: Json = { url: part.image_url };
      if (typeof part.detail === "string" && part.detail !== "original") image.detail = part.detail;
      return { type: "image_url", image_url: image };
    }
    case "input_file": {
      if (typeof part.file_url === "string" && typeof part.file_data !== "string") {
        throw badRequest(
          `${where}: files given by file_url are ${NATIVE_ONLY}; send file_data.`,
          "input",
          "unsupported_value",
        );
      }
      const file: Json = {};
      if (typeof part.file_data === "string") file.file_data = part.file_data;
      if (typeof part.file_id === "string") file.file_id = part.file_id;
      if (typeof part.filename === "string") file.filename = part.filename;
      return { type: "file", file };
    }
    case "input_audio":
      return { type: "input_audio", input_audio: part.input_audio };
    default:
      throw badRequest(
        `${where}: content of type '${part.type}' (role ${role}) is ${NATIVE_ONLY}.`,
        "input",
        "unsupported_value",
      );
  }
}

/** A function call's output as the tool message's text: a string, or its text parts joined. */
function toolOutputText(output: unknown, index: number): string {
  if (typeof output === "string") return output;
  const parts = Array.isArray(output) ? (output as Json[]) : [];
  const texts: string[] = [];
  parts.forEach((part, partIndex) => {
    if (part?.type === "input_text" || part?.type === "output_text") texts.push(String(part.text));
    else {
      throw badRequest(
        `input[${index}].output[${partIndex}]: function call outputs of type '${part?.type}' are ${NATIVE_ONLY}; chat tool results are text.`,
        "input",
        "unsupported_value",
      );
    }
  });
  return texts.join("");
}

function toChatTool(tool: Json): Json {
  if (tool.type !== "function") {
    throw badRequest(
      `Tools of type '${tool.type}' are ${NATIVE_ONLY}; this provider takes function tools.`,
      "tools",
      "unsupported_parameter",
    );
  }
  const fn: Json = { name: tool.name };
  if (typeof tool.description === "string") fn.description = tool.description;
  if (tool.parameters && typeof tool.parameters === "object") fn.parameters = tool.parameters;
  if (typeof tool.strict === "boolean") fn.strict = tool.strict;
  return { type: "function", function: fn };
}

function toChatToolChoice(choice: unknown): unknown {
  if (typeof choice === "string") return choice;
  const found = choice as Json;
  if (found.type === "function") return { type: "function", function: { name: found.name } };
  if (found.type === "allowed_tools" && Array.isArray(found.tools)) {
    return {
      type: "allowed_tools",
      allowed_tools: {
        mode: found.mode,
        tools: (found.tools as Json[]).map((tool) => {
          if (tool?.type !== "function") {
            throw badRequest(
              `Allowed tools of type '${tool?.type}' are ${NATIVE_ONLY}.`,
              "tool_choice",
              "unsupported_value",
            );
          }
          return { type: "function", function: { name: tool.name } };
        }),
      },
    };
  }
  throw badRequest(`tool_choice of type '${found.type}' is ${NATIVE_ONLY}.`, "tool_choice", "unsupported_value");
}

function toResponseFormat(format: Json | undefined): Json | undefined {
  if (!format || format.type === "text") return undefined;
  if (format.type === "json_object") return { type: "json_object" };
  const jsonSchema: Json = { name: format.name, schema: format.schema };
  if (typeof format.strict === "boolean") jsonSchema.strict = format.strict;
  if (typeof format.description === "string") jsonSchema.description = format.description;
  return { type: "json_schema", json_schema: jsonSchema };
}
