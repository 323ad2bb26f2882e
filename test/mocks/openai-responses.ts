import type { ServerResponse } from "node:http";
import { sendJson } from "../helpers/mock-server.ts";
import { requestedSchema, sampleFor } from "./sample-json.ts";

/**
 * OpenAI's native Responses API for the mock upstream (`POST .../responses`), written from OpenAI's API
 * reference: a Response object (an output message, or a function_call item when the request has function tools
 * and `tool_choice` is not `none`) and, for `stream: true`, the documented event sequence with sequence numbers
 * (response.created, response.in_progress, output_item.added, content_part.added, output_text.delta...,
 * output_text.done, content_part.done, output_item.done, response.completed).
 *
 * Reasoning: with `include: ["reasoning.encrypted_content"]` (JSON answers) the output starts with a reasoning item whose
 * `encrypted_content` is sealed for the caller's account (its API key); a request whose input holds encrypted
 * content sealed for another account is refused with 400, as OpenAI refuses content it cannot decrypt.
 */

export interface ResponsesMockOptions {
  reply?: string;
  toolArguments?: Record<string, unknown>;
  /** The caller's account (its Authorization header): what encrypted reasoning is sealed for. */
  account?: string;
  /**
   * One id for every response, as a custom host may answer (a Responses-compatible server that counts from 1 per
   * process, or one that echoes a fixed id): not OpenAI's behaviour, whose ids are unique.
   */
  responseId?: string;
}

const sealedFor = (account: string) => `sealed:${Buffer.from(account).toString("base64url")}`;

const CREATED = 1_700_000_000;
/** OpenAI's ids are unique per response: so are the mock's. */
let served = 0;

export async function answerResponses(body: any, res: ServerResponse, options: ResponsesMockOptions): Promise<void> {
  const model = body.model ?? "mock-model";
  const serial = String(++served).padStart(6, "0");
  const account = options.account ?? "";
  const foreign = (Array.isArray(body.input) ? body.input : []).find(
    (item: any) =>
      item?.type === "reasoning" &&
      typeof item.encrypted_content === "string" &&
      !item.encrypted_content.startsWith(sealedFor(account)),
  );
  if (foreign) {
    return sendJson(res, 400, {
      error: {
        message: `The encrypted content for item ${foreign.id ?? "(no id)"} could not be verified.`,
        type: "invalid_request_error",
        param: "input",
        code: "invalid_encrypted_content",
      },
    });
  }
  const reasoning =
    !body.stream && Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content")
      ? [
          {
            id: `rs_mock_${serial}`,
            type: "reasoning",
            summary: [],
            encrypted_content: `${sealedFor(account)}:${serial}`,
          },
        ]
      : [];
  const schema = requestedSchema(body);
  const reply = schema ? JSON.stringify(sampleFor(schema)) : (options.reply ?? "Hello from the mock Responses API.");
  const tool =
    Array.isArray(body.tools) && body.tool_choice !== "none"
      ? body.tools.find((t: any) => t.type === "function")
      : undefined;
  const inputText = JSON.stringify(body.input ?? "");
  const inputTokens = Math.max(1, Math.ceil(inputText.length / 4));
  const outputText = tool ? JSON.stringify(options.toolArguments ?? {}) : reply;
  const outputTokens = Math.max(1, Math.ceil(outputText.length / 4));
  const item = tool
    ? {
        id: `fc_mock_${serial}`,
        type: "function_call",
        status: "completed",
        call_id: "call_mock_1",
        name: tool.name,
        arguments: outputText,
      }
    : {
        id: `msg_mock_${serial}`,
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: reply, annotations: [], logprobs: [] }],
      };
  // OpenAI's current Response object, every field in the order its answers have.
  const response = {
    id: options.responseId ?? `resp_mock_${serial}`,
    object: "response",
    created_at: CREATED,
    status: "completed",
    background: false,
    billing: { payer: "developer" },
    completed_at: CREATED + 1,
    error: null,
    frequency_penalty: body.frequency_penalty ?? 0,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    model,
    output: [...reasoning, item],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    presence_penalty: body.presence_penalty ?? 0,
    previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    prompt_cache_retention: body.prompt_cache_retention ?? null,
    reasoning: { effort: null, summary: null },
    safety_identifier: body.safety_identifier ?? null,
    service_tier: "default",
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: "text" }, verbosity: body.text?.verbosity ?? "medium" },
    tool_choice: body.tool_choice ?? "auto",
    tools: (body.tools ?? []).map((tool: any) =>
      tool.type === "function" ? { description: null, ...tool, strict: tool.strict ?? true } : tool,
    ),
    top_logprobs: body.top_logprobs ?? 0,
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? "disabled",
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    },
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
  if (!body.stream) return sendJson(res, 200, response);

  let sequence = 0;
  const events: Array<Record<string, unknown>> = [];
  const push = (event: Record<string, unknown>) => events.push({ ...event, sequence_number: sequence++ });
  const pending = { ...response, status: "in_progress", completed_at: null, output: [], usage: null };
  push({ type: "response.created", response: pending });
  push({ type: "response.in_progress", response: pending });
  if (item.type === "function_call") {
    push({
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, arguments: "", status: "in_progress" },
    });
    push({ type: "response.function_call_arguments.delta", item_id: item.id, output_index: 0, delta: outputText });
    push({
      type: "response.function_call_arguments.done",
      item_id: item.id,
      output_index: 0,
      name: item.name,
      arguments: outputText,
    });
    push({ type: "response.output_item.done", output_index: 0, item });
  } else {
    const part = { type: "output_text", text: "", annotations: [], logprobs: [] };
    push({
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, status: "in_progress", content: [] },
    });
    push({ type: "response.content_part.added", item_id: item.id, output_index: 0, content_index: 0, part });
    for (const piece of reply.split(/(?<= )/)) {
      push({
        type: "response.output_text.delta",
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        delta: piece,
        logprobs: [],
      });
    }
    push({
      type: "response.output_text.done",
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      text: reply,
      logprobs: [],
    });
    push({
      type: "response.content_part.done",
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      part: { ...part, text: reply },
    });
    push({ type: "response.output_item.done", output_index: 0, item });
  }
  push({ type: "response.completed", response });
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const event of events) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  res.end();
}
