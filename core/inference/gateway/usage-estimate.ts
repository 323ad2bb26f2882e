import { contentText, countChatPromptTokens, countTokens } from "../catalog/tokens.ts";
import type { ChatUsage, RouteKind } from "../../providers/types.ts";
import { loadedFormat } from "../formats/registry.ts";

/**
 * Usage for answers whose provider reported none: counted with a real tokenizer from the request and the
 * answer (the JSON body, or for a stream the answer its chunks spell: core/inference/gateway/stream/assembly.ts).
 */
export async function estimateUsage(
  route: RouteKind,
  request: Record<string, any>,
  responseBody: Record<string, any> | undefined,
): Promise<ChatUsage> {
  const model = String(request.model ?? "");
  const format = loadedFormat(route);
  if (format) {
    // An inbound format counts as the chat request it translates to, and its answer's texts.
    let messages: Array<Record<string, any>> = [];
    try {
      messages = format.toChat(request).messages ?? [];
    } catch {
      // A body chat cannot express (a native provider took it): counted from its answer only.
    }
    const prompt = await countChatPromptTokens(model, messages);
    const texts = responseBody ? format.outputTexts(responseBody).slots.map((slot) => slot.text) : [];
    const completion = await countTokens(model, texts.join("\n"));
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  }
  let prompt = 0;
  if (route === "chat") prompt = await countChatPromptTokens(model, request.messages ?? []);
  else if (route === "completions") prompt = await countTokens(model, flatten(request.prompt));
  else if (route === "embeddings") prompt = await countTokens(model, flatten(request.input));

  let completionText = "";
  if (responseBody) {
    for (const choice of responseBody.choices ?? []) {
      completionText += contentText(choice.message?.content) + (choice.text ?? "");
      for (const call of choice.message?.tool_calls ?? []) completionText += call.function?.arguments ?? "";
    }
  }
  const completion = await countTokens(model, completionText);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function flatten(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map((item) => (typeof item === "string" ? item : "")).join("\n");
  return "";
}
