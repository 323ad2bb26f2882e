import { runInference } from "../../inference/gateway/inference.ts";
import { chatCompletionRequest, normaliseChatRequest } from "../../inference/gateway/schemas/chat.ts";
import { simpleChatRequest } from "../../inference/gateway/schemas/simple-chat.ts";
import type { HandlerMap } from "../../http/context.ts";
import { readJson, validate } from "../../http/json.ts";
import { mentionsServerSideMcp } from "../../features/mcp/server-side/references.ts";

export const handlers: HandlerMap = {
  chatCompletions: async (request, ctx) => {
    const json = await readJson(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    // Server-side MCP tools (`@gateway-mcp/...` in tools): the gateway runs the tool loop (core/features/mcp/server-side).
    if (mentionsServerSideMcp(json)) {
      const { serverSideMcpChat } = await import("../../features/mcp/server-side/chat.ts");
      return serverSideMcpChat(json, request, ctx);
    }
    const body = normaliseChatRequest(simpleChatRequest(json) ?? validate(chatCompletionRequest, json));
    return runInference("chat", body, request, ctx);
  },
};
