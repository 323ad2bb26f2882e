import { gatewayHeadersOf } from "../../../inference/gateway/plan.ts";
import { chatCompletionRequest, normaliseChatRequest } from "../../../inference/gateway/schemas/chat.ts";
import type { RequestContext } from "../../../services.ts";
import { badRequest } from "../../../http/errors.ts";
import { validate } from "../../../http/json.ts";
import { optedIntoMcpContext, requireServerSideMcpBeta } from "./beta.ts";
import { loopPrerequisites } from "./prerequisites.ts";
import { expandTools } from "./expand.ts";
import { runJsonLoop } from "./json-loop.ts";
import { ToolLoopRun } from "./loop-run.ts";
import { findReferences, type McpToolReference } from "./references.ts";
import { runStreamLoop } from "./stream-loop.ts";

/** Stands in for a reference while the rest of the body is validated (so errors keep their `tools[i]`). */
const PLACEHOLDER = { type: "function", function: { name: "mcp_placeholder" } };

/**
 * POST /v1/chat/completions whose `tools` name server-side MCP tools (beta `server-side-mcp-2026-06-01`, spec 9):
 * checks the opt-in, expands the references into the tools the caller may use, and runs the tool loop (JSON or
 * streamed). Anything refused here is refused before any model call.
 */
export async function serverSideMcpChat(json: unknown, request: Request, ctx: RequestContext): Promise<Response> {
  const raw = json as Record<string, any>;
  const tools = raw.tools as unknown[];
  const references = findReferences(tools);
  const gateway = gatewayHeadersOf(request, ctx);
  requireServerSideMcpBeta(gateway, references[0]!.index);
  const body = normaliseChatRequest(
    validate(chatCompletionRequest, {
      ...raw,
      tools: tools.map((tool, i) => (isReference(references, i) ? PLACEHOLDER : tool)),
    }),
  ) as Record<string, any>;
  if (body.n != null && body.n !== 1) {
    throw badRequest("Server-side MCP tools need a single choice: `n` must be 1.", "n", "unsupported_parameter");
  }
  const { host, principal, config } = await loopPrerequisites(gateway, references, ctx);
  const expanded = await expandTools(tools, references, host, principal, { context: optedIntoMcpContext(gateway) });
  body.tools = expanded.tools;
  body.tool_choice = toolChoiceFor(body.tool_choice, expanded.names);
  const run = new ToolLoopRun({
    request,
    ctx,
    config,
    names: expanded.names,
    host,
    principal,
    model: String(body.model),
    stream: body.stream === true,
    maxSteps: ctx.services.settings.GATEWAY_MCP_MAX_TOOL_STEPS,
  });
  // Declared size of what the client sent, for the request log (the steps' bodies are bigger).
  const declared = Number(request.headers.get("content-length"));
  if (Number.isInteger(declared) && declared > 0) run.outcome.requestChars = declared;
  return body.stream === true ? runStreamLoop(run, body) : runJsonLoop(run, body);
}

function isReference(references: McpToolReference[], index: number): boolean {
  return references.some((reference) => reference.index === index);
}

/** A tool choice naming one server-side tool (`@gateway-mcp/<server>/<tool>`) names its model-facing tool. */
function toolChoiceFor(choice: unknown, names: ExpandedNames): unknown {
  const name = (choice as { function?: { name?: unknown } } | undefined)?.function?.name;
  if (typeof name !== "string") return choice;
  const [reference] = findReferences([{ type: "function", function: { name } }]);
  if (!reference) return choice;
  if (reference.tools?.length !== 1) {
    throw badRequest("tool_choice may name one server-side MCP tool ('@gateway-mcp/<server>/<tool>').", "tool_choice");
  }
  return { type: "function", function: { name: names.nameFor(reference.server, reference.tools[0]!) } };
}

type ExpandedNames = Awaited<ReturnType<typeof expandTools>>["names"];
