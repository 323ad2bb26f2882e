import type OpenAI from "openai";
import { toFile } from "openai";
import { jsonl, parseLines, runBatchToEnd, uploadJsonl } from "../../helpers/batches.ts";
import type { TestGateway } from "../../helpers/gateway.ts";
import { openAISchemaErrors } from "../../helpers/openai-schema.ts";
import type { UpstreamName } from "./upstreams.ts";

/**
 * The cases of the OpenAPI conformance suite, by family, and the targets each family runs on: OpenAI natively and
 * every provider the gateway translates (or relays) that family for. Every JSON answer and stream event a case's
 * client reads is validated against OpenAI's OpenAPI document by the client's fetch (the suite counts them); a
 * case answers the problems of what it is about (a completed response, a tool call...), so an answer that
 * validates but says nothing fails too.
 */

export interface CaseContext {
  /** An openai client routed to the target, whose every answer is checked against OpenAI's schemas. */
  client: OpenAI;
  model: string;
  gateway: TestGateway;
  /** What earlier cases of the same target left for the later ones (a file id, a batch id). */
  state: Record<string, string>;
}

/** A case: its problems (empty when it passes). */
export type Case = (context: CaseContext) => Promise<string[]>;

export interface FamilyTarget {
  /** How the checks name it: `anthropic (translated)`. */
  name: string;
  /** The upstream it routes to (none: the gateway answers by itself). */
  upstream?: UpstreamName;
  model: string;
  /** Headers beyond the upstream's routing. */
  headers?: Record<string, string>;
}

export interface Family {
  name: string;
  cases: Record<string, Case>;
  targets: FamilyTarget[];
}

/** `[problem]` unless `ok`. */
const unless = (ok: unknown, problem: string): string[] => (ok ? [] : [problem]);

const weather: OpenAI.Chat.ChatCompletionFunctionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The current weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};
const responsesWeather: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "The current weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};
const greeting: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Say hello in three words." },
];
const weatherQuestion: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Paris?" }];

/** What a chat stream said: its text, tool calls, last finish reason and usage. */
async function readChatStream(stream: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>) {
  let text = "";
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | undefined;
  const tools: string[] = [];
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    text += choice?.delta?.content ?? "";
    for (const call of choice?.delta?.tool_calls ?? []) if (call.function?.name) tools.push(call.function.name);
    if (choice?.finish_reason) finish = choice.finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  return { text, finish, usage, tools };
}

const chat: Record<string, Case> = {
  "chat completion": async ({ client, model }) => {
    const answer = await client.chat.completions.create({ model, messages: greeting });
    return [
      ...unless(answer.choices[0]?.message.content, "no content"),
      ...unless(answer.choices[0]?.finish_reason === "stop", `finish_reason ${answer.choices[0]?.finish_reason}`),
    ];
  },
  "chat stream with usage": async ({ client, model }) => {
    const stream = await client.chat.completions.create({
      model,
      messages: greeting,
      stream: true,
      stream_options: { include_usage: true },
    });
    const read = await readChatStream(stream);
    return [
      ...unless(read.text, "no text streamed"),
      ...unless(read.finish === "stop", `finish_reason ${read.finish}`),
      ...unless(read.usage?.total_tokens, "no usage chunk"),
    ];
  },
  "chat tool call": async ({ client, model }) => {
    const answer = await client.chat.completions.create({ model, messages: weatherQuestion, tools: [weather] });
    const call = answer.choices[0]?.message.tool_calls?.[0];
    return [
      ...unless(call?.type === "function" && call.function.name === "get_weather", "no get_weather call"),
      ...unless(answer.choices[0]?.finish_reason === "tool_calls", `finish_reason ${answer.choices[0]?.finish_reason}`),
    ];
  },
  "chat tool call stream with usage": async ({ client, model }) => {
    const stream = await client.chat.completions.create({
      model,
      messages: weatherQuestion,
      tools: [weather],
      stream: true,
      stream_options: { include_usage: true },
    });
    const read = await readChatStream(stream);
    return [
      ...unless(read.tools.includes("get_weather"), "no get_weather call streamed"),
      ...unless(read.finish === "tool_calls", `finish_reason ${read.finish}`),
      ...unless(read.usage?.total_tokens, "no usage chunk"),
    ];
  },
};

const completions: Record<string, Case> = {
  completion: async ({ client, model }) => {
    const answer = await client.completions.create({ model, prompt: "Say hello.", max_tokens: 16 });
    return unless(answer.choices[0]?.text, "no text");
  },
  "completion stream": async ({ client, model }) => {
    const stream = await client.completions.create({ model, prompt: "Say hello.", max_tokens: 16, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
    return unless(text, "no text streamed");
  },
};

// One input each: Amazon Titan embeds one text per request.
const embeddings: Record<string, Case> = {
  // The openai SDK asks for base64 unless told otherwise, and decodes it.
  embeddings: async ({ client, model }) => {
    const answer = await client.embeddings.create({ model, input: "one text" });
    return unless(answer.data.length === 1 && answer.data[0]!.embedding.length > 0, "no embedding");
  },
  "embeddings as floats": async ({ client, model }) => {
    const answer = await client.embeddings.create({ model, input: "one text", encoding_format: "float" });
    return unless(typeof answer.data[0]?.embedding[0] === "number", "no float embedding");
  },
};

const moderations: Record<string, Case> = {
  moderation: async ({ client, model }) => {
    const answer = await client.moderations.create({ model, input: "I will hurt you" });
    return [
      ...unless(answer.results.length === 1, `${answer.results.length} results for 1 input`),
      ...unless(answer.results[0]?.categories.violence === true, "violence not flagged"),
    ];
  },
};

const models: Record<string, Case> = {
  "models list": async ({ client }) => {
    const page = await client.models.list();
    return unless(page.data.length > 0, "no models listed");
  },
};

const files: Record<string, Case> = {
  "files upload": async ({ client, state }) => {
    const file = await client.files.create({
      file: await toFile(Buffer.from('{"prompt": "hello"}\n'), "data.jsonl"),
      purpose: "batch",
    });
    state.file = file.id;
    return unless(file.purpose === "batch", `purpose ${file.purpose}`);
  },
  "files list": async ({ client, state }) => {
    const page = await client.files.list({ purpose: "batch" });
    return unless(
      page.data.some((file) => file.id === state.file),
      "the uploaded file is not listed",
    );
  },
  "files retrieve": async ({ client, state }) => {
    if (!state.file) return ["no uploaded file"];
    const file = await client.files.retrieve(state.file);
    return unless(file.id === state.file, `retrieved ${file.id}`);
  },
  "files delete": async ({ client, state }) => {
    if (!state.file) return ["no uploaded file"];
    const deleted = await client.files.delete(state.file);
    return unless(deleted.deleted && deleted.id === state.file, "not deleted");
  },
};

const chatLine = (customId: string, content: string, model: string) => ({
  custom_id: customId,
  method: "POST",
  url: "/v1/chat/completions",
  body: { model, messages: [{ role: "user", content }] },
});

const batches: Record<string, Case> = {
  "batches create": async ({ client, model, state }) => {
    const input = await uploadJsonl(client, jsonl([chatLine("b-1", "first", model), chatLine("b-2", "second", model)]));
    const batch = await client.batches.create({
      input_file_id: input,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    state.batch = batch.id;
    return unless(batch.status === "validating", `status ${batch.status}`);
  },
  // Polled until it ends (every answer checked); the output file's lines carry chat completions, checked too.
  "batches retrieve": async ({ client, gateway, state }) => {
    if (!state.batch) return ["no batch"];
    const done = await runBatchToEnd(gateway, client, state.batch);
    if (done.status !== "completed" || !done.output_file_id) return [`status ${done.status}`];
    const lines = parseLines(await (await client.files.content(done.output_file_id)).text());
    return [
      ...unless(lines.length === 2, `${lines.length} output lines for 2`),
      ...lines.flatMap((line) =>
        openAISchemaErrors("CreateChatCompletionResponse", line.response?.body).map(
          (error) => `output ${line.custom_id}: CreateChatCompletionResponse ${error}`,
        ),
      ),
    ];
  },
  "batches list": async ({ client, state }) => {
    const page = await client.batches.list();
    return unless(
      page.data.some((batch) => batch.id === state.batch),
      "the batch is not listed",
    );
  },
};

/** The events' types and the final Response of a Responses stream. */
async function readResponseStream(stream: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>) {
  const types: string[] = [];
  let final: OpenAI.Responses.Response | undefined;
  for await (const event of stream) {
    types.push(event.type);
    if (event.type === "response.completed") final = event.response;
  }
  return { types, final };
}

const hasItem = (response: OpenAI.Responses.Response | undefined, type: string) =>
  unless(
    response?.output.some((item) => item.type === type),
    `no ${type} output item`,
  );

const responses: Record<string, Case> = {
  response: async ({ client, model, state }) => {
    const response = await client.responses.create({ model, input: "Say hello in three words." });
    state.response = response.id;
    return [...unless(response.status === "completed", `status ${response.status}`), ...hasItem(response, "message")];
  },
  // The stored Response read back, and its input items.
  "response retrieve": async ({ client, state }) => {
    if (!state.response) return ["no stored response"];
    const response = await client.responses.retrieve(state.response);
    const items = await client.responses.inputItems.list(state.response);
    return [
      ...unless(response.id === state.response && response.status === "completed", "not the completed response"),
      ...unless(items.data.length === 1, `${items.data.length} input items for 1`),
    ];
  },
  "response stream": async ({ client, model }) => {
    const stream = await client.responses.create({ model, input: "Say hello in three words.", stream: true });
    const { types, final } = await readResponseStream(stream);
    return [
      ...unless(types[0] === "response.created", `the stream starts with ${types[0]}`),
      ...unless(types.includes("response.output_text.delta"), "no response.output_text.delta"),
      ...hasItem(final, "message"),
    ];
  },
  "response function call": async ({ client, model }) => {
    const response = await client.responses.create({ model, input: "Weather in Paris?", tools: [responsesWeather] });
    return hasItem(response, "function_call");
  },
  "response function call stream": async ({ client, model }) => {
    const stream = await client.responses.create({
      model,
      input: "Weather in Paris?",
      tools: [responsesWeather],
      stream: true,
    });
    const { types, final } = await readResponseStream(stream);
    return [
      ...unless(types.includes("response.function_call_arguments.done"), "no function_call_arguments.done"),
      ...hasItem(final, "function_call"),
    ];
  },
};

const CHAT_TARGETS: FamilyTarget[] = [
  { name: "openai (native)", upstream: "openai", model: "gpt-4o-mini" },
  { name: "anthropic (translated)", upstream: "anthropic", model: "claude-sonnet-4-5" },
  { name: "google (translated)", upstream: "google", model: "gemini-2.5-flash" },
  { name: "vertex-ai gemini (translated)", upstream: "vertex-ai", model: "gemini-2.5-pro" },
  { name: "vertex-ai claude (translated)", upstream: "vertex-ai", model: "claude-sonnet-4-5@20250929" },
  { name: "bedrock (translated)", upstream: "bedrock", model: "anthropic.claude-3-5-sonnet-20240620-v1:0" },
  { name: "cohere (translated)", upstream: "cohere", model: "command-r-plus" },
  { name: "azure-openai (relayed)", upstream: "azure-openai", model: "gpt-4o" },
];

/** Every family, its cases and its targets, in the order the suite runs them. */
export const FAMILIES: Family[] = [
  { name: "chat completions", cases: chat, targets: CHAT_TARGETS },
  {
    name: "completions",
    cases: completions,
    targets: [
      { name: "openai (native)", upstream: "openai", model: "gpt-3.5-turbo-instruct" },
      { name: "azure-openai (relayed)", upstream: "azure-openai", model: "gpt-35-turbo-instruct" },
    ],
  },
  {
    name: "embeddings",
    cases: embeddings,
    targets: [
      { name: "openai (native)", upstream: "openai", model: "text-embedding-3-small" },
      { name: "google (translated)", upstream: "google", model: "text-embedding-004" },
      { name: "vertex-ai (translated)", upstream: "vertex-ai", model: "text-embedding-005" },
      { name: "bedrock titan (translated)", upstream: "bedrock", model: "amazon.titan-embed-text-v2:0" },
      { name: "bedrock cohere (translated)", upstream: "bedrock", model: "cohere.embed-english-v3" },
      { name: "cohere (translated)", upstream: "cohere", model: "embed-english-v3.0" },
      { name: "azure-openai (relayed)", upstream: "azure-openai", model: "text-embedding-3-small" },
    ],
  },
  {
    name: "moderations",
    cases: moderations,
    targets: [
      { name: "openai (native)", upstream: "openai", model: "omni-moderation-latest" },
      { name: "mistral-ai (translated)", upstream: "mistral-ai", model: "mistral-moderation-latest" },
    ],
  },
  {
    name: "models",
    cases: models,
    targets: [
      { name: "gateway catalog", model: "" },
      { name: "openai (native)", upstream: "openai", model: "" },
      { name: "anthropic (translated)", upstream: "anthropic", model: "" },
      { name: "google (translated)", upstream: "google", model: "" },
    ],
  },
  {
    name: "files",
    cases: files,
    targets: [
      { name: "gateway store", model: "" },
      { name: "openai (copied)", upstream: "openai batches", model: "" },
      { name: "azure-openai (copied)", upstream: "azure-openai batches", model: "" },
    ],
  },
  {
    name: "batches",
    cases: batches,
    targets: [
      {
        name: "gateway-run (openai)",
        upstream: "openai",
        model: "gpt-4o-mini",
        headers: { "x-gateway-batch-mode": "gateway" },
      },
      {
        name: "gateway-run (anthropic)",
        upstream: "anthropic",
        model: "claude-sonnet-4-5",
        headers: { "x-gateway-batch-mode": "gateway" },
      },
      { name: "openai (native)", upstream: "openai batches", model: "gpt-4o-mini" },
      { name: "azure-openai (native)", upstream: "azure-openai batches", model: "gpt-4o-mini" },
      { name: "anthropic (native, translated)", upstream: "anthropic batches", model: "claude-3-5-haiku-20241022" },
      {
        name: "bedrock (native, translated)",
        upstream: "bedrock batches",
        model: "anthropic.claude-3-haiku-20240307-v1:0",
      },
      { name: "vertex-ai (native, translated)", upstream: "vertex-ai batches", model: "gemini-2.0-flash" },
    ],
  },
  {
    name: "responses",
    cases: responses,
    targets: CHAT_TARGETS,
  },
];
