import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

/**
 * OpenAI's published OpenAPI document (kept as data beside the repository: ../shared/openai-openapi/openapi.json)
 * as a validator of the gateway's OpenAI-shaped answers: every JSON answer and stream event the e2e suite reads
 * is checked against the component schema OpenAI's SDKs are generated from.
 *
 * Relaxed where OpenAI's live API itself answers differently from the document (each one named, and why), so
 * that a check fails only where the gateway differs from what OpenAI sends.
 */

const DOCUMENT_PATH = new URL("../../../shared/openai-openapi/openapi.json", import.meta.url);

export type OpenAISchemaName =
  | "CreateChatCompletionResponse"
  | "CreateChatCompletionStreamResponse"
  | "CreateCompletionResponse"
  | "CreateEmbeddingResponse"
  | "CreateModerationResponse"
  | "ListModelsResponse"
  | "Model"
  | "OpenAIFile"
  | "ListFilesResponse"
  | "DeleteFileResponse"
  | "Batch"
  | "ListBatchesResponse"
  | "Response"
  | "ResponseStreamEvent"
  | "ResponseItemList";

/**
 * Fields the document marks non-null (or required) that OpenAI's live API answers as null (or leaves out): the
 * path of the schema property, and what it becomes.
 */
function relax(document: any): void {
  const schemas = document.components.schemas;
  // Responses: the live API answers `"user": null` when the request named no user (its own reference example
  // shows it); the document types `user` as a string.
  const user = schemas.ModelResponseProperties.properties.user;
  schemas.ModelResponseProperties.properties.user = { anyOf: [user, { type: "null" }] };
  // Chat chunks: the live API answers `"finish_reason": null` on every chunk but the last (its streaming guide
  // shows it); the document types it a string.
  const chunkChoice = schemas.CreateChatCompletionStreamResponse.properties.choices.items;
  chunkChoice.properties.finish_reason = { anyOf: [chunkChoice.properties.finish_reason, { type: "null" }] };
  // Responses: `response.created` and `response.in_progress` carry the Response with `"usage": null` (nothing is
  // counted yet; OpenAI's streaming reference shows it), and a Response read while in progress has none either.
  const response = schemas.Response.allOf[2];
  response.properties.usage = { anyOf: [response.properties.usage, { type: "null" }] };
  // The live completions endpoint answers `"logprobs": null` on every choice unless logprobs were asked for; the
  // document's choice marks `logprobs` an object (nullable only through a `null` type it does not list).
  const completionChoice = schemas.CreateCompletionResponse.properties.choices.items;
  completionChoice.properties.logprobs = { anyOf: [completionChoice.properties.logprobs, { type: "null" }] };
  // Files: the live API answers `"expires_at": null` for a file that never expires (and `"status_details": null`
  // once processed); the document types both as values.
  const file = schemas.OpenAIFile;
  for (const field of ["expires_at", "status_details"]) {
    if (file.properties[field]) file.properties[field] = { anyOf: [file.properties[field], { type: "null" }] };
  }
  // Batches: the live API answers every field not yet set as null (`"output_file_id": null`,
  // `"in_progress_at": null`, `"errors": null`, `"model": null`..., as its own reference example shows); the
  // document types those optional fields as values.
  const batch = schemas.Batch;
  for (const [field, property] of Object.entries(batch.properties)) {
    if (!batch.required?.includes(field)) batch.properties[field] = { anyOf: [property, { type: "null" }] };
  }
  // Lists: the live API answers `"first_id": null, "last_id": null` for an empty page.
  for (const list of ["ListFilesResponse", "ListBatchesResponse"]) {
    for (const field of ["first_id", "last_id"]) {
      const property = schemas[list].properties?.[field];
      if (property) schemas[list].properties[field] = { anyOf: [property, { type: "null" }] };
    }
  }
  // Embeddings: with `encoding_format: "base64"` (what the openai SDK asks for by default) the live API answers
  // each embedding as a base64 string; the document lists only the array of floats.
  const embedding = schemas.Embedding.properties.embedding;
  schemas.Embedding.properties.embedding = { anyOf: [embedding, { type: "string", contentEncoding: "base64" }] };
}

/**
 * OpenAPI 3.0's `nullable: true`, which a few of the document's schemas still use, as JSON Schema 2020-12 says it
 * (the document is 3.1; ajv refuses `nullable` beside no `type`).
 */
function withoutNullable(node: any): any {
  if (Array.isArray(node)) return node.map(withoutNullable);
  if (!node || typeof node !== "object") return node;
  const out: any = {};
  for (const [key, value] of Object.entries(node)) if (key !== "nullable") out[key] = withoutNullable(value);
  if (node.nullable !== true) return out;
  if (typeof out.type === "string") return { ...out, type: [out.type, "null"] };
  return { anyOf: [out, { type: "null" }] };
}

/** A stream event's own schema, by its `type` (the document's union is matched by that discriminator). */
function eventSchemas(document: any): Map<string, string> {
  const byType = new Map<string, string>();
  for (const variant of document.components.schemas.ResponseStreamEvent.anyOf) {
    const name = String(variant.$ref).split("/").at(-1)!;
    const type = document.components.schemas[name]?.properties?.type;
    for (const value of type?.enum ?? (type?.const ? [type.const] : [])) byType.set(value, name);
  }
  return byType;
}

let compiled: { ajv: Ajv2020; validators: Map<string, ValidateFunction>; events: Map<string, string> } | undefined;

function validatorOf(name: string): ValidateFunction {
  if (!compiled) {
    const document = withoutNullable(JSON.parse(readFileSync(DOCUMENT_PATH, "utf8")));
    relax(document);
    // The document's own keywords (x-oai-*, x-stainless-*, discriminator) are annotations here, and its formats
    // (`unixtime`) are OpenAI's: neither is checked.
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: "https://openai.invalid/openapi.json", components: document.components });
    compiled = { ajv, validators: new Map(), events: eventSchemas(document) };
  }
  let validate = compiled.validators.get(name);
  if (!validate) {
    validate = compiled.ajv.getSchema(`https://openai.invalid/openapi.json#/components/schemas/${name}`)!;
    compiled.validators.set(name, validate);
  }
  return validate;
}

/** Compiles every schema a check may need now, so that no check in the middle of a stream pays for it. */
function compileAll(): void {
  const names: OpenAISchemaName[] = [
    "CreateChatCompletionResponse",
    "CreateChatCompletionStreamResponse",
    "CreateCompletionResponse",
    "Response",
  ];
  for (const name of names) validatorOf(name);
  for (const variant of new Set(compiled!.events.values())) validatorOf(variant);
}

/** The problems of `value` against OpenAI's schema `name` (empty when it validates). */
export function openAISchemaErrors(name: OpenAISchemaName, value: unknown): string[] {
  validatorOf(name);
  // A Responses stream event against its own variant, so that the problems named are that variant's.
  const variant =
    name === "ResponseStreamEvent" ? compiled!.events.get(String((value as { type?: unknown })?.type)) : undefined;
  if (name === "ResponseStreamEvent" && !variant) return [`/type '${String((value as any)?.type)}' is no stream event`];
  const validate = validatorOf(variant ?? name);
  if (validate(value)) return [];
  return (validate.errors ?? []).slice(0, 12).map((error) => `${error.instancePath || "/"} ${error.message}`);
}

/** Throws (with every problem and the value) unless `value` validates against OpenAI's schema `name`. */
export function assertOpenAISchema(name: OpenAISchemaName, value: unknown): void {
  throwIfInvalid(name, openAISchemaErrors(name, value), value);
}

/**
 * What a validating fetch does with each answer (or stream event) it checked: `errors` is empty when it
 * validates. The default throws on a problem; a suite that counts its checks (test/e2e/openapi-conformance)
 * collects them instead.
 */
export type OnSchemaChecked = (name: OpenAISchemaName, errors: string[], value: unknown) => void;

const throwIfInvalid: OnSchemaChecked = (name, errors, value) => {
  if (errors.length > 0) {
    throw new Error(
      `not a valid ${name} per OpenAI's OpenAPI document:\n  ${errors.join("\n  ")}\n${JSON.stringify(value).slice(0, 2000)}`,
    );
  }
};

/**
 * Which OpenAI schema a successful answer of the gateway is, by the request's method and path (OpenAI-shaped
 * routes only; undefined for the rest, which are not checked).
 */
export function openAISchemaOfRequest(url: URL, init?: RequestInit): OpenAISchemaName | undefined {
  const method = (init?.method ?? "GET").toUpperCase();
  const path = url.pathname.replace(/\/+$/, "");
  const routes: Array<[string, RegExp, OpenAISchemaName]> = [
    ["POST", /\/chat\/completions$/, "CreateChatCompletionResponse"],
    ["POST", /\/v1\/completions$/, "CreateCompletionResponse"],
    ["POST", /\/embeddings$/, "CreateEmbeddingResponse"],
    ["POST", /\/moderations$/, "CreateModerationResponse"],
    ["GET", /\/v1\/models$/, "ListModelsResponse"],
    ["GET", /\/v1\/models\/[^/]+$/, "Model"],
    ["POST", /\/v1\/files$/, "OpenAIFile"],
    ["GET", /\/v1\/files$/, "ListFilesResponse"],
    ["GET", /\/v1\/files\/[^/]+$/, "OpenAIFile"],
    ["DELETE", /\/v1\/files\/[^/]+$/, "DeleteFileResponse"],
    ["POST", /\/v1\/batches$/, "Batch"],
    ["GET", /\/v1\/batches$/, "ListBatchesResponse"],
    ["GET", /\/v1\/batches\/[^/]+$/, "Batch"],
    ["POST", /\/v1\/batches\/[^/]+\/cancel$/, "Batch"],
    ["POST", /\/v1\/responses$/, "Response"],
    ["GET", /\/v1\/responses\/[^/]+$/, "Response"],
    ["POST", /\/v1\/responses\/[^/]+\/cancel$/, "Response"],
    ["GET", /\/v1\/responses\/[^/]+\/input_items$/, "ResponseItemList"],
  ];
  return routes.find(([verb, pattern]) => verb === method && pattern.test(path))?.[2];
}

/**
 * A fetch that validates every OpenAI-shaped answer it reads, for a client SDK's `fetch` option; `onChecked` is
 * told of each check (by default a problem throws).
 */
export function validatingFetch(
  schemaOf: (url: URL, init?: RequestInit) => OpenAISchemaName | undefined = openAISchemaOfRequest,
  onChecked: OnSchemaChecked = throwIfInvalid,
) {
  compileAll();
  const check = (name: OpenAISchemaName, value: unknown) => onChecked(name, openAISchemaErrors(name, value), value);
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await fetch(input, init);
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    const name = response.ok ? schemaOf(url, init) : undefined;
    if (!name || !response.body) return response;
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("text/event-stream")) {
      // Each event checked as it passes (a stream is not held back: clients and tests see it arrive in pieces).
      const eventSchema = name === "Response" ? "ResponseStreamEvent" : streamSchema(name);
      const body = response.body.pipeThrough(checkedEvents(eventSchema, check));
      return new Response(body, { status: response.status, headers: response.headers });
    }
    const text = await response.text();
    check(name, JSON.parse(text));
    return new Response(text, { status: response.status, headers: response.headers });
  };
}

/** Passes an SSE body through, checking the JSON of each `data:` line against `name` once its event is whole. */
function checkedEvents(
  name: OpenAISchemaName,
  checkEvent: (name: OpenAISchemaName, value: unknown) => void,
): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let buffer = "";
  const check = (final: boolean) => {
    const blocks = buffer.split(/\r?\n\r?\n/);
    buffer = final ? "" : blocks.pop()!;
    for (const data of sseData(blocks.join("\n\n"))) {
      const event = JSON.parse(data);
      if (!isAzurePromptFilterChunk(event)) checkEvent(name, event);
    }
  };
  return new TransformStream({
    transform(chunk, controller) {
      buffer += decoder.decode(chunk, { stream: true });
      check(false);
      controller.enqueue(chunk);
    },
    flush() {
      buffer += decoder.decode();
      check(true);
    },
  });
}

/**
 * Azure OpenAI's first chunk, which annotates the prompt (`prompt_filter_results`, empty `id` and `object`, no
 * choices): Azure's documented addition to OpenAI's chunk stream, relayed as Azure sent it, and no OpenAI chunk.
 */
function isAzurePromptFilterChunk(event: any): boolean {
  return Array.isArray(event?.prompt_filter_results) && Array.isArray(event.choices) && event.choices.length === 0;
}

function streamSchema(name: OpenAISchemaName): OpenAISchemaName {
  return name === "CreateChatCompletionResponse" ? "CreateChatCompletionStreamResponse" : name;
}

/** The `data:` payloads of an SSE text, `[DONE]` left out. */
export function sseData(text: string): string[] {
  return text
    .split(/\n\n/)
    .map((block) =>
      block
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n"),
    )
    .filter((data) => data !== "" && data !== "[DONE]");
}
