import { withHeaders } from "../../../http/response-headers.ts";
import type { ToolLoopRun } from "./loop-run.ts";
import { type ChatToolCall, runToolCalls, splitToolCalls } from "./run-tools.ts";

/**
 * The tool loop for a JSON answer: call the model; while it calls server-side MCP tools only, run them, append
 * its message and their results, and call it again. It ends when the model answers without server-side calls,
 * when it also calls client tools (the server-side ones are run, the client's are returned as usual), or at the
 * step limit (the answer returned without its server-side calls, `finish_reason` `length`, `gateway_mcp.stopped`
 * saying why). `usage` is the sum over all model calls.
 */
export async function runJsonLoop(
  run: ToolLoopRun,
  firstBody: Record<string, any>,
  /** The final chat answer in the client's format (a Responses request's Response); chat answers as it is. */
  present: (answer: Record<string, any>) => Record<string, any> = (answer) => answer,
): Promise<Response> {
  let body = firstBody;
  try {
    for (;;) {
      const step = await run.callModel(body);
      // An answer that is no completion (a guardrail's denial) is the client's answer as it is.
      if (step.response.status !== 200 || !isJson(step.response)) {
        run.settle();
        return step.response;
      }
      const answer = (await step.response.json()) as Record<string, any>;
      await step.outcome.done;
      run.count(step);
      const choice = answer.choices?.[0];
      const message = choice?.message ?? {};
      const { server, client } = splitToolCalls(message.tool_calls as ChatToolCall[] | undefined, run.names);
      if (server.length === 0) return finish(run, present, step.response, answer);
      if (run.steps >= run.maxSteps) {
        message.tool_calls = client.length > 0 ? client : undefined;
        if (!message.tool_calls) delete message.tool_calls;
        choice.finish_reason = client.length > 0 ? "tool_calls" : "length";
        return finish(run, present, step.response, answer, "max_tool_steps");
      }
      const { messages, records } = await runToolCalls(server, run.host, run.principal, {
        traceId: run.ctx.traceId,
        signal: run.ctx.signal,
      });
      run.toolCalls.push(...records);
      if (client.length > 0) {
        // The client's tools are the client's to run: return them, the server-side ones already done.
        message.tool_calls = client;
        return finish(run, present, step.response, answer, "client_tool_calls");
      }
      body = run.followUp(body, { content: message.content ?? null, toolCalls: server }, messages);
    }
  } catch (error) {
    run.settle(undefined, error);
    throw error;
  }
}

function finish(
  run: ToolLoopRun,
  present: (answer: Record<string, any>) => Record<string, any>,
  response: Response,
  answer: Record<string, any>,
  stopped?: Parameters<ToolLoopRun["summary"]>[0],
): Response {
  const usage = run.usage;
  if (usage) answer.usage = usage;
  answer.gateway_mcp = run.summary(stopped);
  const presented = present(answer);
  const text = JSON.stringify(presented);
  run.settle({ body: presented, chars: text.length });
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return withHeaders(new Response(text, { status: response.status, headers }), {
    "x-gateway-mcp-steps": String(run.steps),
  });
}

function isJson(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").includes("application/json");
}
