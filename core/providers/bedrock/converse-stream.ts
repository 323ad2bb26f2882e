import { chatChunk, usageChunk } from "../stream/openai-chunks.ts";
import { type StreamTransformer, type TransformContext, type UpstreamEvent, UpstreamError } from "../types.ts";
import { completionId, mapStopReason, mapUsage } from "./converse.ts";

/**
 * ConverseStream events (already framed by core/providers/stream/aws-eventstream.ts) -> OpenAI chunks.
 *
 * messageStart -> role chunk; contentBlockStart(toolUse) -> tool call header (index, id, name);
 * contentBlockDelta text / toolUse.input / reasoningContent.text -> content / arguments / reasoning_content;
 * messageStop -> finish chunk; metadata -> usage chunk `{choices: [], usage}`; exceptions -> UpstreamError.
 */

/** Modelled exceptions of ConverseStream with their documented HTTP status. */
const EXCEPTION_STATUS: Record<string, number> = {
  throttlingException: 429,
  modelStreamErrorException: 424,
  validationException: 400,
  internalServerException: 500,
  serviceUnavailableException: 503,
  modelTimeoutException: 408,
};

export function streamException(event: UpstreamEvent): UpstreamError {
  const name = event.event ?? "unknownException";
  const key = name.charAt(0).toLowerCase() + name.slice(1);
  let payload: any;
  try {
    payload = JSON.parse(event.data);
  } catch {
    payload = undefined;
  }
  const message = payload?.message ?? payload?.Message ?? payload?.originalMessage ?? (event.data || name);
  const status = EXCEPTION_STATUS[key] ?? 500;
  const type =
    status === 429 ? "rate_limit_error" : status >= 500 || status === 424 ? "server_error" : "invalid_request_error";
  return new UpstreamError(status, String(message), { type, code: key });
}

export function createConverseStreamTransformer(ctx: TransformContext): StreamTransformer {
  const id = completionId(ctx);
  /** Converse contentBlockIndex -> OpenAI tool_calls index. */
  const toolIndexes = new Map<number, number>();
  let finished = false;
  let failed = false;

  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    chatChunk({ id, created: ctx.now, model: ctx.model }, delta, finishReason);

  const toolIndex = (blockIndex: number): number => {
    let index = toolIndexes.get(blockIndex);
    if (index === undefined) {
      index = toolIndexes.size;
      toolIndexes.set(blockIndex, index);
    }
    return index;
  };

  return {
    push(event) {
      if (event.messageType === "exception" || event.messageType === "error") {
        failed = true;
        throw streamException(event);
      }
      let data: any;
      try {
        data = event.data ? JSON.parse(event.data) : {};
      } catch {
        throw new UpstreamError(502, `Bedrock sent an unreadable ${event.event ?? "stream"} event`, {
          type: "server_error",
          code: "bad_upstream_stream",
        });
      }
      switch (event.event) {
        case "messageStart":
          return [chunk({ role: data.role ?? "assistant", content: "" })];
        case "contentBlockStart": {
          const toolUse = data.start?.toolUse;
          if (!toolUse) return [];
          const index = toolIndex(data.contentBlockIndex ?? 0);
          return [
            chunk({
              tool_calls: [
                { index, id: toolUse.toolUseId, type: "function", function: { name: toolUse.name, arguments: "" } },
              ],
            }),
          ];
        }
        case "contentBlockDelta": {
          const delta = data.delta ?? {};
          if (typeof delta.text === "string") return delta.text ? [chunk({ content: delta.text })] : [];
          if (delta.toolUse) {
            const index = toolIndex(data.contentBlockIndex ?? 0);
            const input = delta.toolUse.input;
            const args = typeof input === "string" ? input : input === undefined ? "" : JSON.stringify(input);
            return args ? [chunk({ tool_calls: [{ index, function: { arguments: args } }] })] : [];
          }
          if (typeof delta.reasoningContent?.text === "string" && delta.reasoningContent.text) {
            return [chunk({ reasoning_content: delta.reasoningContent.text })];
          }
          // reasoningContent.signature / redactedContent, citations...: nothing to show in OpenAI's format.
          return [];
        }
        case "messageStop":
          finished = true;
          return [chunk({}, mapStopReason(data.stopReason))];
        case "metadata":
          if (!data.usage) return [];
          return [usageChunk({ id, created: ctx.now, model: ctx.model }, mapUsage(data.usage))];
        default:
          // contentBlockStop and events added to the API later.
          return [];
      }
    },
    end() {
      // A stream that ends without messageStop was cut short: say so instead of pretending it finished.
      if (!finished && !failed) {
        throw new UpstreamError(502, "Bedrock stream ended before messageStop", {
          type: "server_error",
          code: "incomplete_stream",
        });
      }
      return [];
    },
  };
}
