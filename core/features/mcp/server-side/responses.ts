import { gatewayHeadersOf } from "../../../inference/gateway/plan.ts";
import type { TypedEvent, TransformContext } from "../../../providers/types.ts";
import type { RequestContext } from "../../../services.ts";
import { badRequest } from "../../../http/errors.ts";
import { optedIntoMcpContext, requireServerSideMcpBeta } from "./beta.ts";
import { loopPrerequisites } from "./prerequisites.ts";
import { expandTools } from "./expand.ts";
import { runJsonLoop } from "./json-loop.ts";
import { ToolLoopRun } from "./loop-run.ts";
import { findReferences } from "./references.ts";
import { runStreamLoop, type StreamSink } from "./stream-loop.ts";

type Json = Record<string, any>;
type ResponsesModule = typeof import("../../../inference/formats/responses/index.ts");

/** A Responses request with server-side MCP tools, checked and expanded: `run` answers it. */
export interface ServerSideMcpResponses {
  /** Runs the tool loop for the request as sent (its input after `previous_response_id`), answering a Response. */
  run(sent: Json, requestId: string): Promise<Response>;
}

/**
 * POST /v1/responses whose `tools` name server-side MCP tools (function tools named `@gateway-mcp/...`, or `mcp`
 * tools whose `server_url` is one). Checked before anything runs: the beta opt-in, no `background`, the servers
 * and tools (expanded as for chat). The loop is the chat one: the request is translated to chat completions
 * (core/inference/formats/responses), every model call is a chat call through the pipeline on any provider, and the final
 * chat answer (or stream) is translated back into a Response (or its events), with `gateway_mcp` telling the steps.
 * The caller (core/features/responses/create-response.ts) stores and presents it as any other Response.
 */
export async function prepareServerSideMcpResponses(
  body: Json,
  request: Request,
  ctx: RequestContext,
): Promise<ServerSideMcpResponses> {
  const tools = body.tools as unknown[];
  const references = findReferences(tools);
  const gateway = gatewayHeadersOf(request, ctx);
  requireServerSideMcpBeta(gateway, references[0]!.index);
  if (body.background === true) {
    throw badRequest(
      "Server-side MCP tools cannot run in a background response.",
      "background",
      "unsupported_parameter",
    );
  }
  const { host, principal, config } = await loopPrerequisites(gateway, references, ctx);
  const expanded = await expandTools(tools, references, host, principal, { context: optedIntoMcpContext(gateway) });
  const mcpTools = expanded.tools.filter((tool) =>
    expanded.names.targetOf((tool as { function?: { name?: string } }).function?.name ?? ""),
  );
  const referenced = new Set(references.map((reference) => reference.index));

  return {
    async run(sent, requestId) {
      const responses = await import("../../../inference/formats/responses/index.ts");
      const clientTools = (sent.tools as unknown[]).filter((_, index) => !referenced.has(index));
      const chat = responses.responsesToChat({ ...sent, tools: clientTools.length > 0 ? clientTools : undefined });
      chat.tools = [...(chat.tools ?? []), ...mcpTools];
      const stream = sent.stream === true;
      if (stream) chat.stream_options = { ...(chat.stream_options ?? {}), include_usage: true };
      const run = new ToolLoopRun({
        request,
        ctx,
        config,
        names: expanded.names,
        host,
        principal,
        model: String(sent.model),
        stream,
        maxSteps: ctx.services.settings.GATEWAY_MCP_MAX_TOOL_STEPS,
        route: "responses",
        requestId,
      });
      // What the Responses translation reads of a context: the ids, the time and the model.
      const translation = {
        route: "responses",
        stream,
        model: String(sent.model),
        now: Math.floor(Date.now() / 1000),
        requestId,
        includeUsage: true,
      } as TransformContext;
      if (!stream) {
        return runJsonLoop(run, chat, (answer) => ({
          ...responses.responseFromChat(answer, sent, translation),
          gateway_mcp: answer.gateway_mcp,
        }));
      }
      return runStreamLoop(run, chat, responsesSink(responses, sent, translation));
    },
  };
}

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** The loop's chat chunks as Responses events; the final Response (with `gateway_mcp`) is the stream's answer. */
function responsesSink(responses: ResponsesModule, body: Json, translation: TransformContext): StreamSink {
  const converter = responses.streamFromChat(body, translation);
  let summary: unknown;
  let final: Json | undefined;
  const write = (events: TypedEvent[]) =>
    events
      .map((event) => {
        let written = event;
        if (TERMINAL.has(event.type) && event.response && typeof event.response === "object") {
          final = { ...(event.response as Json), ...(summary ? { gateway_mcp: summary } : {}) };
          written = { ...event, response: final };
        }
        return `event: ${written.type}\ndata: ${JSON.stringify(written)}\n\n`;
      })
      .join("");
  return {
    includeUsage: true,
    chunk(chunk) {
      if (chunk.gateway_mcp) summary = chunk.gateway_mcp;
      return write(converter.push(chunk));
    },
    failure(error) {
      const event = {
        type: "error",
        code: error.code ?? error.type ?? null,
        message: error.message,
        param: error.param ?? null,
      };
      return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
    },
    end: () => write(converter.end()),
    answer: () => final,
  };
}
