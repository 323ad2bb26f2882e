import type { TypedEvent } from "../../../providers/types.ts";
import type { InboundFormat } from "../types.ts";
import { ResponsesEventAssembler } from "./assembler.ts";
import { responseFromChat } from "./from-chat.ts";
import { replayResponse } from "./replay.ts";
import { ResponsesStreamConverter } from "./stream.ts";
import { inputTexts, outputTexts } from "./texts.ts";
import { responsesToChat } from "./to-chat.ts";
import { fitToContextWindow } from "./truncation.ts";
import { usageOf } from "./usage.ts";

/**
 * OpenAI's Responses API (`POST /v1/responses`) as an inbound format: the request translated to chat completions
 * for providers without a native Responses API, their answer and stream translated back (contract:
 * core/inference/formats/types.ts). Responses are built in OpenAI's current shape; present.ts shows them in the schema the
 * client asked for (spec 9).
 */
export const responsesFormat: InboundFormat<TypedEvent> = {
  route: "responses",
  toChat: responsesToChat,
  fromChat: responseFromChat,
  streamFromChat: (body, ctx) => new ResponsesStreamConverter(body, ctx),
  replay: replayResponse,
  assembler: () => new ResponsesEventAssembler(),
  usageOf,
  // Only a completed answer is complete: an incomplete one (cut by max_output_tokens or a content filter) is not
  // cached, nor is a failed one.
  isComplete: (answer) => answer?.status === "completed" && !answer.error,
  inputTexts,
  outputTexts,
  prepare: fitToContextWindow,
};

export { ResponsesEventAssembler } from "./assembler.ts";
export { contentTextOf, reasoningTextOf, responseFromChat } from "./from-chat.ts";
export { fallbackCallId, newResponseId, outputItemId } from "./ids.ts";
export { presentEvent, presentResponse, RESPONSES_BETA, type ResponseSchema, schemaOf } from "./present.ts";
export { PIECE_CHARS, replayResponse, terminalEventOf } from "./replay.ts";
export { buildResponse, outputTextOf, startedResponse } from "./response.ts";
export { METADATA_LIMITS, type ResponsesRequest, responsesRequest } from "./schema.ts";
export { ResponsesStreamConverter, streamFromChat } from "./stream.ts";
export { inputTexts, outputTexts } from "./texts.ts";
export { responsesToChat } from "./to-chat.ts";
export { fitToContextWindow } from "./truncation.ts";
export { chatUsageFromResponses, type ResponsesUsage, responsesUsageFromChat, usageOf } from "./usage.ts";
