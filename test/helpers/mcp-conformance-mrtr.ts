import type { GetPromptResult, InputRequests, ServerContext } from "@modelcontextprotocol/server";
import { ProtocolError, acceptedContent, createRequestStateCodec, inputRequired } from "@modelcontextprotocol/server";
import { randomUUID } from "node:crypto";

/**
 * The multi round-trip tools and prompt of the conformance upstream (2026-07-28, SEP-2322), as the suite's
 * input-required scenarios call them: each answers `input_required` with the elicitation, sampling or roots
 * requests it lacks (and a signed `requestState` where state must survive the round), and completes once the
 * client's retry brings the answers. Only kinds the caller declared are asked for: the SDK refuses the others
 * with -32021, which `test_missing_capability` shows.
 */

/** `requestState` is minted signed and verified on the retry (the spec asks integrity for state that matters). */
export const stateCodec = createRequestStateCodec<Record<string, unknown>>({
  key: crypto.getRandomValues(new Uint8Array(32)),
});
const askName = (message = "What is your name?") =>
  inputRequired.elicit({
    message,
    requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  });
const askConfirmation = () =>
  inputRequired.elicit({
    message: "Please confirm",
    requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
  });
const askModel = (text: string) =>
  inputRequired.createMessage({ messages: [{ role: "user", content: { type: "text", text } }], maxTokens: 50 });
const mint = (state: Record<string, unknown>) => stateCodec.mint({ ...state, nonce: randomUUID() });

/** The multi round-trip tools (2026-07-28): each asks for what it lacks, and completes once the retry brings it. */
export const MRTR_TOOLS = [
  "test_input_required_result_elicitation",
  "test_input_required_result_sampling",
  "test_input_required_result_list_roots",
  "test_input_required_result_request_state",
  "test_input_required_result_multiple_inputs",
  "test_input_required_result_multi_round",
  "test_input_required_result_tampered_state",
  "test_input_required_result_capabilities",
  "test_missing_capability",
];

type Result = Record<string, unknown>;
const text = (value: string): Result => ({ content: [{ type: "text", text: value }] });

export async function multiRoundTool(name: string, ctx: ServerContext): Promise<never> {
  return (await answer(name, ctx)) as never;
}

async function answer(name: string, ctx: ServerContext): Promise<Result> {
  const responses = ctx.mcpReq.inputResponses;
  switch (name) {
    case "test_input_required_result_elicitation": {
      const given = acceptedContent<{ name: string }>(responses, "user_name")?.name;
      return typeof given === "string"
        ? text(`Hello, ${given}!`)
        : inputRequired({ inputRequests: { user_name: askName() } });
    }
    case "test_input_required_result_sampling": {
      const sampled = responses?.capital_question as { content?: { text?: string } } | undefined;
      if (sampled) return text(`Sampling response: ${sampled.content?.text ?? JSON.stringify(sampled)}`);
      return inputRequired({ inputRequests: { capital_question: askModel("What is the capital of France?") } });
    }
    case "test_input_required_result_list_roots": {
      const roots = (responses?.client_roots as { roots?: Array<{ uri?: string }> } | undefined)?.roots;
      if (Array.isArray(roots)) return text(`Client exposed ${roots.length} root(s)`);
      return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
    }
    case "test_input_required_result_request_state":
    case "test_input_required_result_tampered_state": {
      if (acceptedContent(responses, "confirm") !== undefined) {
        if (ctx.mcpReq.requestState() === undefined) throw new ProtocolError(-32602, "Invalid requestState");
        return text("state-ok: requestState verified");
      }
      return inputRequired({ inputRequests: { confirm: askConfirmation() }, requestState: await mint({ tool: name }) });
    }
    case "test_input_required_result_multiple_inputs":
      return multipleInputs(ctx);
    case "test_input_required_result_multi_round":
      return multiRound(ctx);
    case "test_input_required_result_capabilities":
      return declaredKindsOnly(ctx);
    default:
      // test_missing_capability: asks the model whatever the caller declared (the SDK answers -32021 without it).
      if (responses?.llm_answer !== undefined) return text("sampling round-trip complete");
      return inputRequired({ inputRequests: { llm_answer: askModel("Reply with the single word: pong") } });
  }
}

async function multipleInputs(ctx: ServerContext): Promise<Result> {
  const responses = ctx.mcpReq.inputResponses;
  const name = acceptedContent<{ name: string }>(responses, "user_name")?.name;
  const greeting = (responses?.greeting as { content?: { text?: string } } | undefined)?.content?.text;
  const roots = (responses?.client_roots as { roots?: unknown[] } | undefined)?.roots;
  if (typeof name === "string" && typeof greeting === "string" && Array.isArray(roots))
    return text(`${greeting} ${name}: ${roots.length} root(s)`);
  return inputRequired({
    inputRequests: {
      user_name: askName(),
      greeting: askModel("Generate a greeting"),
      client_roots: inputRequired.listRoots(),
    },
    requestState: await mint({ tool: "multiple_inputs" }),
  });
}

async function multiRound(ctx: ServerContext): Promise<Result> {
  const state = ctx.mcpReq.requestState<Record<string, unknown>>();
  const round = state?.tool === "multi_round" && typeof state.round === "number" ? state.round : 0;
  if (round === 0)
    return inputRequired({
      inputRequests: { step1: askName("Step 1: What is your name?") },
      requestState: await mint({ tool: "multi_round", round: 1 }),
    });
  if (round === 1) {
    const name = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, "step1")?.name ?? "unknown";
    return inputRequired({
      inputRequests: {
        step2: inputRequired.elicit({
          message: "Step 2: What is your favorite color?",
          requestedSchema: { type: "object", properties: { color: { type: "string" } }, required: ["color"] },
        }),
      },
      requestState: await mint({ tool: "multi_round", round: 2, name }),
    });
  }
  const color = acceptedContent<{ color: string }>(ctx.mcpReq.inputResponses, "step2")?.color ?? "unknown";
  return text(`Multi-round complete: ${String(state?.name ?? "unknown")} likes ${color}`);
}

function declaredKindsOnly(ctx: ServerContext): Result {
  if (ctx.mcpReq.inputResponses !== undefined) return text("Capability-aware input requests fulfilled");
  const envelope = ctx.mcpReq.envelope as Record<
    string,
    { elicitation?: unknown; sampling?: unknown; roots?: unknown }
  >;
  const declared = envelope?.["io.modelcontextprotocol/clientCapabilities"];
  const inputRequests: InputRequests = {};
  if (declared?.elicitation !== undefined) inputRequests.user_name = askName();
  if (declared?.sampling !== undefined) inputRequests.greeting = askModel("Generate a short greeting");
  if (declared?.roots !== undefined) inputRequests.client_roots = inputRequired.listRoots();
  if (Object.keys(inputRequests).length === 0) return text("No declared capability supports an input request");
  return inputRequired({ inputRequests });
}

/** A prompt that needs context from the user before it renders. */
export function inputRequiredPrompt(ctx: ServerContext): GetPromptResult {
  const context = acceptedContent<{ context: string }>(ctx.mcpReq.inputResponses, "user_context")?.context;
  if (typeof context === "string")
    return { messages: [{ role: "user", content: { type: "text", text: `Use the following context: ${context}` } }] };
  return inputRequired({
    inputRequests: {
      user_context: inputRequired.elicit({
        message: "What context should the prompt use?",
        requestedSchema: { type: "object", properties: { context: { type: "string" } }, required: ["context"] },
      }),
    },
  }) as never;
}
