/**
 * The request that asks the next target to finish a broken answer: the original request (in chat shape), with
 * the partial answer as the assistant's turn to continue from. A target whose chat adapter continues an
 * assistant turn (Anthropic's and Bedrock's prefill, Gemini's model turn: `continuesAssistantTurn`) gets that turn
 * last; any other gets it followed by an instruction to go on exactly where it stopped (the overlap trimmer cuts
 * a restarted word). The continuation is text: tools stay declared (a conversation with tool calls needs them)
 * but may not be called, and the answer is not reasoned again (a prefill refuses thinking).
 */

type Json = Record<string, any>;

export const CONTINUE_INSTRUCTION =
  "Your previous answer was cut off. Continue it exactly where it stopped: write only the rest, without " +
  "repeating any of it and without any comment or preamble.";

/** Fields of a chat body that do not fit a continuation: several choices, log probabilities, reasoning. */
const DROPPED = [
  "n",
  "logprobs",
  "top_logprobs",
  "reasoning_effort",
  "reasoning",
  "thinking",
  "parallel_tool_calls",
  "prediction",
  "audio",
  "modalities",
] as const;

export interface ContinuationAsk {
  /** The original request in chat shape (the target's params and guardrails applied). */
  chat: Json;
  /** What the client was sent of the answer so far. */
  partial: string;
  /** The target continues a trailing assistant turn (prefill). */
  prefill: boolean;
  /** Output tokens the broken legs spent: taken off the answer's token limit. */
  spentTokens: number;
}

export function continuationRequest(ask: ContinuationAsk): Json {
  const body: Json = { ...ask.chat };
  for (const field of DROPPED) delete body[field];
  const messages: Json[] = Array.isArray(body.messages) ? [...body.messages] : [];
  // Anthropic refuses a final assistant turn that ends with white space; the trimmer copes with what follows.
  const said = ask.prefill ? ask.partial.trimEnd() : ask.partial;
  if (said !== "") {
    messages.push({ role: "assistant", content: said });
    if (!ask.prefill) messages.push({ role: "user", content: CONTINUE_INSTRUCTION });
  }
  body.messages = messages;
  if (Array.isArray(body.tools) && body.tools.length > 0) body.tool_choice = "none";
  else delete body.tool_choice;
  if (Array.isArray(body.functions) && body.functions.length > 0) body.function_call = "none";
  for (const limit of ["max_tokens", "max_completion_tokens"] as const) {
    if (typeof body[limit] === "number") body[limit] = Math.max(1, body[limit] - ask.spentTokens);
  }
  body.stream = true;
  body.stream_options = { include_usage: true };
  return body;
}
