import { toChatUsage } from "../../../providers/anthropic/messages.ts";
import type { TypedEvent } from "../../../providers/types.ts";
import type { InboundFormat } from "../types.ts";
import { createMessageAssembler } from "./assembler.ts";
import { chatToMessage } from "./from-chat.ts";
import { replayMessage } from "./replay.ts";
import { createMessagesStreamConverter } from "./stream-from-chat.ts";
import { messagesInputTexts, messagesOutputTexts } from "./texts.ts";
import { messagesToChat } from "./to-chat.ts";

export { estimateInputTokens } from "./count-tokens.ts";
export { type CountTokensRequest, countTokensRequest, type MessagesRequest, messagesRequest } from "./schema.ts";

/**
 * Anthropic's Messages API as an inbound format (POST /v1/messages): native on Anthropic and on Claude models of
 * Bedrock and Vertex AI (their `messages` routes), translated to and from chat completions for every other
 * provider.
 */
export const messagesFormat: InboundFormat<TypedEvent> = {
  route: "messages",
  toChat: messagesToChat,
  fromChat: chatToMessage,
  streamFromChat: createMessagesStreamConverter,
  replay: replayMessage,
  assembler: createMessageAssembler,
  usageOf: (answer) => (answer?.usage && typeof answer.usage === "object" ? toChatUsage(answer.usage) : undefined),
  isComplete: (answer) => typeof answer?.stop_reason === "string" && answer.stop_reason !== "",
  inputTexts: messagesInputTexts,
  outputTexts: messagesOutputTexts,
};
