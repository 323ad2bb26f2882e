import { readBounded } from "../util/read-bounded.ts";
import type * as z from "zod";
import { HttpError, badRequest } from "./errors.ts";
import type { HeaderSource } from "./request-headers.ts";
import { maxJsonDepth, textMayNestDeeperThanLimit, withinJsonDepth } from "../util/json-depth.ts";

/** Body size limits in bytes; overridable by env (docs/configuration.md). */
export const DEFAULT_JSON_BODY_LIMIT = 25 * 1024 * 1024;

/**
 * JSON.parse, then the nesting limit: a deeper document answers 400 (deep values overflow the stack of every
 * recursive step after parsing: validation, re-serialisation, logging).
 */
export function parseJsonWithinDepth(text: string, param: string | null, what: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw badRequest(`${what} is not valid JSON: ${(error as Error).message}`, param, "invalid_json");
  }
  if (textMayNestDeeperThanLimit(text)) checkJsonDepth(value, param, what);
  return keepLargeIntegers(text, value);
}

/**
 * Top-level integer fields whose range goes past 2^53 (`seed`: the signed 64-bit range). JSON.parse turns
 * their digits into the nearest double; such a value is read again from its source text and kept as raw
 * JSON (JSON.rawJSON), which JSON.stringify writes back digit for digit when the body goes upstream.
 */
const LOSSLESS_INTEGER_KEYS = new Set(["seed"]);

interface RawJson {
  readonly rawJSON: string;
}
const rawJsonApi = JSON as unknown as {
  rawJSON(text: string): RawJson;
  isRawJSON(value: unknown): value is RawJson;
  parse(
    text: string,
    reviver: (this: unknown, key: string, value: unknown, context: { source?: string }) => unknown,
  ): unknown;
};

/** An integer kept digit for digit (see LOSSLESS_INTEGER_KEYS), or undefined for any other value. */
export function rawJsonInteger(value: unknown): bigint | undefined {
  return rawJsonApi.isRawJSON(value) ? BigInt(value.rawJSON) : undefined;
}

function keepLargeIntegers(text: string, value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  let lossy = false;
  for (const key of LOSSLESS_INTEGER_KEYS) {
    const item = record[key];
    if (typeof item === "number" && Number.isInteger(item) && !Number.isSafeInteger(item)) lossy = true;
  }
  if (!lossy) return value;
  // Rare (a seed past 2^53): parse again with a reviver, which sees each number's source text.
  const found: Array<{ holder: unknown; key: string; source: string }> = [];
  const reparsed = rawJsonApi.parse(text, function (key, item, context) {
    if (LOSSLESS_INTEGER_KEYS.has(key) && typeof item === "number" && /^-?\d+$/.test(context.source ?? "")) {
      found.push({ holder: this, key, source: context.source! });
    }
    return item;
  }) as Record<string, unknown>;
  for (const { holder, key, source } of found) if (holder === reparsed) reparsed[key] = rawJsonApi.rawJSON(source);
  return reparsed;
}

/** 400 for a parsed value nested deeper than the limit (see parseJsonWithinDepth). */
export function checkJsonDepth(value: unknown, param: string | null, what: string): void {
  if (!withinJsonDepth(value)) {
    throw badRequest(
      `${what} nests objects and arrays deeper than the limit of ${maxJsonDepth()} levels (GATEWAY_MAX_JSON_DEPTH).`,
      param,
      "json_too_deep",
    );
  }
}

/** Response helper that serialises once and sets the content type. */
export function json(body: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  headers.set("content-type", "application/json");
  return new Response(JSON.stringify(body), { ...init, headers });
}

/**
 * Reads a request body as text, refusing (413) bodies over `limit` bytes without buffering them whole:
 * the declared content-length is checked first, then the stream is counted as it arrives.
 */
export async function readText(
  request: Request,
  limit: number,
  headers: HeaderSource = request.headers,
): Promise<string> {
  const declared = Number(headers.get("content-length") ?? "NaN");
  if (declared > limit) throw tooLarge(limit);
  // A declared length within the limit bounds the body (HTTP framing), so it can be read in one go. That is
  // also the fast path of the Node adapter (@hono/node-server reads the socket straight into a Buffer; going
  // through `request.body` instead builds a web ReadableStream and a full Request per request).
  if (Number.isInteger(declared) && declared >= 0) {
    const text = await request.text();
    if (text.length > limit / 3 && Buffer.byteLength(text) > limit) throw tooLarge(limit);
    return text;
  }
  if (!request.body) return "";
  return (await readBounded(request.body, limit, () => tooLarge(limit))).toString("utf8");
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, `Request body is larger than the limit of ${limit} bytes.`, {
    code: "request_too_large",
  });
}

/** Parses a JSON request body: 415 for a non-JSON content type, 400 for malformed JSON. */
export async function readJson(
  request: Request,
  limit = DEFAULT_JSON_BODY_LIMIT,
  headers: HeaderSource = request.headers,
): Promise<unknown> {
  const contentType = headers.get("content-type");
  if (contentType && !/^application\/([\w.+-]*\+)?json\b/i.test(contentType)) {
    throw new HttpError(415, `Unsupported content type '${contentType}'; send application/json.`, {
      code: "unsupported_media_type",
    });
  }
  const text = await readText(request, limit, headers);
  if (text.trim() === "")
    throw badRequest("The request body is empty; a JSON object is required.", null, "invalid_json");
  return parseJsonWithinDepth(text, null, "The request body");
}

/**
 * Any zod 4 schema, classic (`zod`, the control plane) or `zod/mini` (the data-plane request schemas): both
 * carry a `safeParse` method, so validating costs no runtime import of either.
 */
export type Schema<Output = unknown> = z.core.$ZodType<Output> & {
  safeParse(value: unknown): z.core.util.SafeParseResult<Output>;
};

/** Validates a value with a zod schema; the first issue becomes a 400 naming the offending param path. */
export function validate<T extends Schema>(schema: T, value: unknown, paramPrefix = ""): z.core.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data as z.core.output<T>;
  const issue = result.error.issues[0]!;
  const path = issue.path
    .map((part, i) => (typeof part === "number" ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`))
    .join("");
  const param = paramPrefix && path ? `${paramPrefix}.${path}` : paramPrefix || path || null;
  const where = param ? `'${param}': ` : "";
  throw badRequest(`Invalid value for ${where}${issue.message}`.replace(/for $/, ""), param, "invalid_value");
}

/** Reads and validates a JSON body in one step. */
export async function readBody<T extends Schema>(
  request: Request,
  schema: T,
  limit?: number,
): Promise<z.core.output<T>> {
  return validate(schema, await readJson(request, limit));
}
