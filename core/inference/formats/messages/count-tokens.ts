import { countChatPromptTokens, countTokens } from "../../catalog/tokens.ts";
import { messagesToChat } from "./to-chat.ts";

/**
 * The gateway's own input-token count of a Messages body (POST /v1/messages/count_tokens on providers with no
 * count endpoint): the messages and system prompt as the chat translation sends them, plus the tool
 * definitions as JSON (server tools included: they are counted, not translated). An estimate: the tokenizer
 * is the catalog's for the model, images count for nothing.
 */
export async function estimateInputTokens(body: Record<string, any>): Promise<number> {
  const { tools, tool_choice: _choice, ...rest } = body;
  const chat = messagesToChat(rest);
  const model = typeof body.model === "string" ? body.model : "";
  const prompt = await countChatPromptTokens(model, chat.messages);
  const toolTokens = Array.isArray(tools) && tools.length ? await countTokens(model, JSON.stringify(tools)) : 0;
  return prompt + toolTokens;
}
