import type { ChatCompletionRequest } from "./chat.ts";
import { MAX_MODEL_LENGTH } from "./limits.ts";

/**
 * The common chat body (a model, plain text messages, a few sampling numbers) checked by hand: zod's parse of
 * it cost about 35 µs and 7 KB of garbage per request, a few % of the gateway's own work. Only accepts: a body
 * it is not sure of (another field, a content array, a tool message, a value out of range) returns undefined
 * and goes through the schema (chat.ts), which also words every error. What it accepts the schema accepts too,
 * with the same meaning (test/unit/inference/gateway/simple-chat.test.ts compares the two on generated bodies); it is
 * returned as it is (the schema would copy it, with its fields in the schema's order).
 */

/** The fields this check knows, with the schema's rule for each (chat.ts, common.ts). */
const FIELDS = new Map<string, (value: unknown) => boolean>([
  ["model", (value) => typeof value === "string" && value.length > 0 && value.length <= MAX_MODEL_LENGTH],
  ["messages", (value) => Array.isArray(value) && value.length > 0 && value.every(isSimpleMessage)],
  ["max_tokens", (value) => value == null || isIntAtLeast(value, 1)],
  ["max_completion_tokens", (value) => value == null || isIntAtLeast(value, 1)],
  ["temperature", (value) => value == null || isNumberIn(value, 0, 2)],
  ["top_p", (value) => value == null || isNumberIn(value, 0, 1)],
  ["presence_penalty", (value) => value == null || isNumberIn(value, -2, 2)],
  ["frequency_penalty", (value) => value == null || isNumberIn(value, -2, 2)],
  ["n", (value) => value == null || (isIntAtLeast(value, 1) && (value as number) <= 128)],
  ["stream", (value) => value == null || typeof value === "boolean"],
  ["user", (value) => value === undefined || (typeof value === "string" && value.length <= 512)],
]);

const SIMPLE_ROLES = new Set(["system", "developer", "user", "assistant"]);

/** `{role, content: string, name?: string}` for a role whose content may be text. */
function isSimpleMessage(message: unknown): boolean {
  if (!isPlainObject(message)) return false;
  for (const key in message) if (key !== "role" && key !== "content" && key !== "name") return false;
  const { role, content, name } = message as { role?: unknown; content?: unknown; name?: unknown };
  return (
    typeof role === "string" &&
    SIMPLE_ROLES.has(role) &&
    typeof content === "string" &&
    (name === undefined || typeof name === "string")
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isIntAtLeast(value: unknown, min: number): boolean {
  return Number.isSafeInteger(value) && (value as number) >= min;
}

function isNumberIn(value: unknown, min: number, max: number): boolean {
  return typeof value === "number" && Number.isFinite(value) && value >= min && value <= max;
}

export function simpleChatRequest(body: unknown): ChatCompletionRequest | undefined {
  if (!isPlainObject(body)) return undefined;
  // Both required fields present (a missing one is the schema's error to word).
  if (!("model" in body) || !("messages" in body)) return undefined;
  for (const key in body) {
    // A Map: a key such as `__proto__` or `constructor` finds nothing.
    const check = FIELDS.get(key);
    if (!check?.(body[key])) return undefined;
  }
  return body as ChatCompletionRequest;
}
