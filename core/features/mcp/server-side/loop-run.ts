import type { Principal } from "../../../auth/principal.ts";
import { routeInference } from "../../../inference/gateway/inference.ts";
import { type InferenceOutcome, newOutcome } from "../../../inference/gateway/outcome.ts";
import { recordFailure } from "../../../inference/gateway/plan.ts";
import type { RequestContext } from "../../../services.ts";
import { logRequest } from "../../../observe/logs/log-request.ts";
import type { ConfigNode } from "../../../inference/routing/config.ts";
import type { ChatUsage } from "../../../providers/types.ts";
import type { McpToolHost } from "../tool-host.ts";
import type { ChatToolCall, ToolCallRecord, ToolMessage } from "./run-tools.ts";
import type { McpToolNames } from "./tool-names.ts";
import { sumUsage } from "./usage.ts";
import { answerKeyOf } from "../../../inference/gateway/answer-key.ts";

type Outcome = InferenceOutcome & { finish(): void };

/** One model call of the loop: the pipeline's answer, and its own outcome and context (for its log). */
export interface ModelStep {
  response: Response;
  outcome: Outcome;
  ctx: RequestContext;
}

/** Why the loop stopped early, for the answer's `gateway_mcp` summary. */
export type StopReason = "max_tool_steps" | "client_tool_calls";

/**
 * The state of one request's tool loop (JSON or streamed). Each model call is a sub-request of the client's
 * request through the whole pipeline (routing, fallbacks, policies, guardrails, cache), with its own outcome and
 * a request log of its own in the request's trace; the last one (the answer the client gets, or the call that
 * failed) is the request's own outcome, logged by the app as usual, so every step's cost is counted once.
 */
export class ToolLoopRun {
  readonly request: Request;
  readonly ctx: RequestContext;
  readonly config: ConfigNode;
  readonly names: McpToolNames;
  readonly host: McpToolHost;
  readonly principal: Principal;
  readonly requestId: string;
  readonly maxSteps: number;
  /** The request's own outcome (ctx.outcome): becomes the last step's when the loop ends. */
  readonly outcome: Outcome;
  readonly toolCalls: ToolCallRecord[] = [];
  readonly #usages: Array<ChatUsage | undefined> = [];
  #pending: ModelStep | undefined;
  #settled = false;
  steps = 0;

  constructor(options: {
    request: Request;
    ctx: RequestContext;
    config: ConfigNode;
    names: McpToolNames;
    host: McpToolHost;
    principal: Principal;
    model: string;
    stream: boolean;
    maxSteps: number;
    /** The client's route (the steps are chat calls either way) and the id its answer is named by. */
    route?: "chat" | "responses";
    requestId?: string;
  }) {
    this.request = options.request;
    this.ctx = options.ctx;
    this.config = options.config;
    this.names = options.names;
    this.host = options.host;
    this.principal = options.principal;
    this.maxSteps = options.maxSteps;
    this.requestId = options.requestId ?? `chatcmpl-${answerKeyOf(this.ctx)}`;
    this.outcome = newOutcome(options.route ?? "chat", options.model, options.stream);
    this.ctx.outcome = this.outcome;
  }

  /** Calls the model once through the pipeline. A failure settles the request with that step and throws. */
  async callModel(body: Record<string, any>): Promise<ModelStep> {
    if (this.#pending) this.#logPending();
    this.steps += 1;
    const outcome = newOutcome("chat", String(body.model), body.stream === true);
    outcome.requestBody = body;
    // A context of its own: admitted by the policies, guarded and timed as one model call.
    const ctx: RequestContext = { ...this.ctx, outcome, startedAt: performance.now() };
    // Its log names the step (the request's own log, the last step's, keeps the client's span name).
    const gateway = this.ctx.gateway;
    if (gateway) {
      const name = `server-side MCP step ${this.steps}`;
      ctx.gateway = { ...gateway, spanName: gateway.spanName ? `${gateway.spanName} (${name})` : name };
    }
    let response: Response;
    try {
      response = await routeInference("chat", body, this.config, this.request, ctx, outcome, this.requestId);
    } catch (error) {
      this.#pending = { response: new Response(null, { status: outcome.status ?? 500 }), outcome, ctx };
      this.settle();
      throw error;
    }
    const step = { response, outcome, ctx };
    this.#pending = step;
    return step;
  }

  /** Adds a finished step's usage to the total (call once its outcome is done). */
  count(step: ModelStep): void {
    this.#usages.push(step.outcome.usage);
  }

  get usage(): ChatUsage | undefined {
    return sumUsage(this.#usages);
  }

  /** The assistant message and tool results to send the model next. */
  followUp(body: Record<string, any>, assistant: AssistantTurn, results: ToolMessage[]): Record<string, any> {
    const next: Record<string, any> = {
      ...body,
      messages: [...body.messages, assistantMessage(assistant), ...results],
    };
    // A forced choice (a tool, or `required`) applies to the first call only: else the model could never answer.
    if (next.tool_choice !== undefined && next.tool_choice !== "none") next.tool_choice = "auto";
    return next;
  }

  /**
   * Ends the request: the last step (its answer, or its failure) becomes the request's outcome. `answer`: what
   * the client got instead of the step's own answer. `error`: a failure after the step (e.g. in a tool call).
   */
  settle(answer?: { body: unknown; chars?: number }, error?: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    const step = this.#pending;
    this.#pending = undefined;
    const own = this.outcome;
    if (step)
      Object.assign(own, step.outcome, { done: own.done, finish: own.finish, stream: own.stream, route: own.route });
    if (answer) {
      own.responseBody = answer.body;
      if (answer.chars !== undefined) own.responseChars = answer.chars;
    }
    own.totalMs = performance.now() - this.ctx.startedAt;
    if (error !== undefined && !own.error) recordFailure(own, error);
    else own.finish();
  }

  /** A step that led to tool calls: logged as its own request in the trace. */
  #logPending(): void {
    const step = this.#pending!;
    this.#pending = undefined;
    if (this.ctx.principal) {
      this.ctx.waitUntil(
        logRequest(this.request, step.response, { path: "/v1/chat/completions" }, step.ctx, step.outcome),
      );
    }
  }

  /** The `gateway_mcp` summary added to the answer. */
  summary(stopped?: StopReason): Record<string, unknown> {
    return { steps: this.steps, tool_calls: this.toolCalls, ...(stopped ? { stopped } : {}) };
  }
}

/** What the model said in a step that called tools. */
export interface AssistantTurn {
  content: string | null;
  toolCalls: ChatToolCall[];
}

function assistantMessage(turn: AssistantTurn): Record<string, unknown> {
  return {
    role: "assistant",
    content: turn.content,
    tool_calls: turn.toolCalls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.function.name, arguments: call.function.arguments ?? "" },
    })),
  };
}
