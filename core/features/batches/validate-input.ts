import { sha256Hex } from "../../util/ids.ts";
import { checkLineBody } from "./endpoints.ts";
import { readLines } from "./line-reader.ts";
import type { BatchEndpoint, BatchError, BatchInputLine } from "./types.ts";

/** At most this many errors are kept on the batch (`errors.data[]`); the count of the rest is said in the last. */
export const MAX_REPORTED_ERRORS = 1000;
/** Error messages are cut to this length: the batch record stays small. */
const MAX_MESSAGE_LENGTH = 200;
/** OpenAI's limit on custom ids. */
export const MAX_CUSTOM_ID_LENGTH = 512;

export interface InputCheck {
  errors: BatchError[];
  /** Lines (requests) in the file. */
  total: number;
  /** The model every line names, or null when they differ (or none does). */
  model: string | null;
}

export interface InputLimits {
  maxLines: number;
  maxLineBytes: number;
}

/**
 * Reads the input file once, as a stream, and checks every line: JSON object, `custom_id` (a unique string),
 * `method` POST, `url` equal to the batch's endpoint, `body` valid for that route. Custom ids are remembered as
 * hashes (bounded memory whatever their length). Stops at the line limit.
 */
export async function checkInput(
  body: ReadableStream<Uint8Array>,
  endpoint: BatchEndpoint,
  limits: InputLimits,
): Promise<InputCheck> {
  const errors: BatchError[] = [];
  let dropped = 0;
  const report = (error: BatchError) => {
    if (errors.length < MAX_REPORTED_ERRORS)
      errors.push({ ...error, message: error.message.slice(0, MAX_MESSAGE_LENGTH) });
    else dropped += 1;
  };
  const seen = new Set<string>();
  let total = 0;
  let model: string | null | undefined;
  for await (const raw of readLines(body, limits.maxLineBytes)) {
    if (!raw.tooLong && raw.text.trim() === "") continue;
    total += 1;
    if (total > limits.maxLines) {
      report({
        code: "too_many_requests",
        message: `The input file has more than ${limits.maxLines} requests (GATEWAY_BATCH_MAX_LINES); split it into smaller batches.`,
        param: null,
        line: raw.line,
      });
      break;
    }
    const parsed = await checkLine(raw.text, raw.tooLong, raw.line, endpoint, limits.maxLineBytes, report);
    if (!parsed) continue;
    const key = sha256Hex(parsed.custom_id);
    if (seen.has(key)) {
      report({
        code: "duplicate_custom_id",
        message: `The custom_id '${parsed.custom_id}' is used by an earlier line; every custom_id must be unique.`,
        param: "custom_id",
        line: raw.line,
      });
      continue;
    }
    seen.add(key);
    const lineModel = typeof parsed.body.model === "string" ? parsed.body.model : null;
    model = model === undefined ? lineModel : model === lineModel ? model : null;
  }
  if (total === 0) {
    report({ code: "empty_file", message: "The input file has no requests.", param: "input_file_id", line: null });
  }
  if (dropped > 0) {
    errors[errors.length - 1] = {
      code: "too_many_errors",
      message: `${dropped + 1} more errors were found and are not listed.`,
      param: null,
      line: null,
    };
  }
  return { errors, total, model: model ?? null };
}

/** The validated lines of a file that passed checkInput, read again from its stream. */
export async function* inputLines(
  body: ReadableStream<Uint8Array>,
  endpoint: BatchEndpoint,
  maxLineBytes: number,
): AsyncIterable<BatchInputLine> {
  for await (const raw of readLines(body, maxLineBytes)) {
    if (raw.tooLong || raw.text.trim() === "") continue;
    const value = JSON.parse(raw.text) as Record<string, any>;
    yield { line: raw.line, custom_id: value.custom_id, method: "POST", url: endpoint, body: value.body };
  }
}

async function checkLine(
  text: string,
  tooLong: boolean,
  line: number,
  endpoint: BatchEndpoint,
  maxLineBytes: number,
  report: (error: BatchError) => void,
): Promise<BatchInputLine | undefined> {
  if (tooLong) {
    report({ code: "line_too_long", message: `The line is longer than ${maxLineBytes} bytes.`, param: null, line });
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    report({
      code: "invalid_json_line",
      message: `The line is not valid JSON: ${(error as Error).message}`,
      param: null,
      line,
    });
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    report({ code: "invalid_json_line", message: "The line must be a JSON object.", param: null, line });
    return undefined;
  }
  const fields = value as Record<string, unknown>;
  const customId = fields.custom_id;
  if (typeof customId !== "string" || customId === "" || customId.length > MAX_CUSTOM_ID_LENGTH) {
    report({
      code: "invalid_custom_id",
      message: `custom_id must be a non-empty string of at most ${MAX_CUSTOM_ID_LENGTH} characters.`,
      param: "custom_id",
      line,
    });
    return undefined;
  }
  if (fields.method !== "POST") {
    report({ code: "invalid_method", message: "method must be POST.", param: "method", line });
    return undefined;
  }
  if (fields.url !== endpoint) {
    report({
      code: "mismatched_url",
      message: `url must be the batch's endpoint '${endpoint}' (got ${JSON.stringify(fields.url)?.slice(0, 100)}).`,
      param: "url",
      line,
    });
    return undefined;
  }
  const body = fields.body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    report({ code: "invalid_request", message: "body must be a JSON object.", param: "body", line });
    return undefined;
  }
  const problem = await checkLineBody(endpoint, body);
  if (problem) {
    report({
      code: "invalid_request",
      message: problem.message,
      param: problem.param ? `body.${problem.param}` : "body",
      line,
    });
    return undefined;
  }
  return { line, custom_id: customId, method: "POST", url: endpoint, body: body as Record<string, any> };
}
