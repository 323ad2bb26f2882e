import { randomBytes } from "node:crypto";

/**
 * Input items as OpenAI stores them (the ResponseItem shapes `GET /responses/{id}/input_items` lists): every item
 * has an id, items whose OpenAI shape carries a status have one, and a message is a `type: "message"` item with
 * a content array (`{role, content: "text"}` shorthand spelled out).
 */

/** Id prefixes by item type, as OpenAI names its items (`msg_...`, `fc_...`). */
const ID_PREFIXES: Record<string, string> = {
  message: "msg",
  function_call: "fc",
  function_call_output: "fco",
  custom_tool_call: "ctc",
  custom_tool_call_output: "ctco",
  reasoning: "rs",
  web_search_call: "ws",
  file_search_call: "fs",
  computer_call: "cu",
  computer_call_output: "cuo",
  image_generation_call: "ig",
  code_interpreter_call: "ci",
  local_shell_call: "lsh",
  local_shell_call_output: "lsho",
  shell_call: "sh",
  shell_call_output: "sho",
  apply_patch_call: "apc",
  apply_patch_call_output: "apco",
  mcp_call: "mcp",
  mcp_list_tools: "mcpl",
  mcp_approval_request: "mcpr",
  mcp_approval_response: "mcpa",
  tool_search_call: "tsc",
  tool_search_output: "tso",
};

/** Item types whose stored (listed) shape has a `status`; `completed` is what a sent item is. */
const WITH_STATUS = new Set([
  "message",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "web_search_call",
  "file_search_call",
  "computer_call",
  "computer_call_output",
  "image_generation_call",
  "code_interpreter_call",
  "local_shell_call",
  "local_shell_call_output",
  "shell_call",
  "shell_call_output",
  "apply_patch_call",
  "apply_patch_call_output",
  "tool_search_call",
  "tool_search_output",
]);

/** A new item id: the type's prefix and 32 hex characters (128 random bits). */
export function newItemId(type: string): string {
  return `${ID_PREFIXES[type] ?? "item"}_${randomBytes(16).toString("hex")}`;
}

/**
 * A request's `input` as stored items: a string becomes one user message; items keep every field they have and
 * gain an id and a status where missing. The result is still a valid `input` (it may be sent on as it is).
 */
export function assignItemIds(input: string | ReadonlyArray<Record<string, any>>): Record<string, any>[] {
  const items = typeof input === "string" ? [{ role: "user", content: input }] : input;
  return items.map((item) => {
    const stored = item.type === undefined && typeof item.role === "string" ? asMessage(item) : { ...item };
    if (stored.type === "message" && typeof stored.content === "string") {
      stored.content = [textPart(stored.role, stored.content)];
    }
    if (stored.status === undefined && WITH_STATUS.has(stored.type)) stored.status = "completed";
    const id = typeof stored.id === "string" && stored.id !== "" ? stored.id : newItemId(String(stored.type));
    // The id first, as OpenAI lists items.
    return Object.assign({ id }, stored, { id });
  });
}

/** `{role, content}` (OpenAI's EasyInputMessage) as a message item. */
function asMessage(item: Record<string, any>): Record<string, any> {
  return { type: "message", ...item };
}

/** Assistant text is `output_text` (with its annotations); every other role's is `input_text`. */
function textPart(role: unknown, text: string): Record<string, any> {
  return role === "assistant" ? { type: "output_text", text, annotations: [] } : { type: "input_text", text };
}
