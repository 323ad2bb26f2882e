import { v7 as timeOrderedUuid } from "uuid";
import { pooledRandomBytes, sha256Hex } from "../util/ids.ts";
import { isCredentialField, isCredentialHeader } from "../security/credential-fields.ts";
import { TtlCache } from "../util/ttl-cache.ts";
import { badRequest } from "./errors.ts";
import type { HeaderSource } from "./request-headers.ts";

/**
 * Gateway request headers come as `x-gateway-<name>`; the Portkey SDK sends the same headers as
 * `x-portkey-<name>`, accepted as aliases so that SDK works unmodified. docs/api.md ("Gateway headers") lists
 * them all with their client parameter names.
 */
export function gatewayHeader(headers: HeaderSource, name: string): string | null {
  let names = HEADER_NAMES.get(name);
  if (!names) {
    names = [`x-gateway-${name}`, `x-portkey-${name}`];
    HEADER_NAMES.set(name, names);
  }
  return headers.get(names[0]) ?? headers.get(names[1]);
}

/** Full header names by suffix, built once (they are read on every request). */
const HEADER_NAMES = new Map<string, [string, string]>();

export const TRACE_ID_HEADER = "x-gateway-trace-id";
const TRACE_ID_PATTERN = /^[\w.:@/+=-]{1,128}$/;

/**
 * The caller's trace id when it is a sane token, else a new one: a UUIDv7 (RFC 9562), whose leading timestamp
 * puts the logs' trace index entries (log-index-schema.ts) at the end of the index, where a random UUID would
 * write a random page of it per log (8 of the storage thread's ~33 µs per log, bench/log-index-writes.ts).
 * Its random bits come from the pooled source: uuid's own draws 16 bytes per call (~1.5 µs on the event loop).
 */
export function traceIdOf(headers: HeaderSource): string {
  const given = gatewayHeader(headers, "trace-id");
  return given && TRACE_ID_PATTERN.test(given) ? given : timeOrderedUuid({ random: pooledRandomBytes(16) });
}

/** Response headers the routing layer sets (spec 5.3 / Portkey's response schema). */
export const RESPONSE_HEADERS = {
  traceId: TRACE_ID_HEADER,
  retryAttemptCount: "x-gateway-retry-attempt-count",
  lastUsedOptionIndex: "x-gateway-last-used-option-index",
  provider: "x-gateway-provider",
  cacheStatus: "x-gateway-cache-status",
} as const;

/** Metadata limits (spec 2.8). */
export const METADATA_LIMITS = { pairs: 16, keyLength: 64, valueLength: 512 } as const;

/**
 * Every gateway request header of spec 5.3 (and the routing ones of 5.2), read once per request into one
 * object that later stages (routing, cache, logs, guardrails, tracing) consume. Invalid values answer 400
 * naming the header.
 */
export interface GatewayRequestHeaders {
  traceId: string;
  /** Every gateway header by its name after `x-gateway-` (an `x-portkey-` alias filling in): read without lookups. */
  values: ReadonlyMap<string, string>;
  /** `x-gateway-metadata`: string-to-string map, at most 16 pairs (keys <= 64, values <= 512 characters). */
  metadata?: Record<string, string>;
  /** `x-gateway-config`: inline JSON (or base64 JSON), or a saved config id / slug; raw, parsed by routing. */
  config?: string;
  /** `x-gateway-provider`: provider id or `@slug` of a saved provider. */
  provider?: string;
  /** `x-gateway-virtual-key` (legacy). */
  virtualKey?: string;
  /** `x-gateway-custom-host` (raw; SSRF-checked by routing). */
  customHost?: string;
  /** `x-gateway-request-timeout` in ms. */
  requestTimeoutMs?: number;
  /** `x-gateway-forward-headers`: header names to pass to the provider as they are (sensitive ones removed). */
  forwardHeaders: string[];
  /** `x-gateway-sensitive-headers`, lower-cased: never forwarded, hashed in logs. */
  sensitiveHeaders: string[];
  /** `x-gateway-beta`: beta features opted into (comma-separated values allowed). */
  beta: string[];
  /** `x-gateway-span-id`, `x-gateway-parent-span-id`, `x-gateway-span-name`. */
  spanId?: string;
  parentSpanId?: string;
  spanName?: string;
  /** `x-gateway-cache-force-refresh`, `x-gateway-cache-namespace`. */
  cacheForceRefresh: boolean;
  cacheNamespace?: string;
  /** `x-gateway-fetch-integrated-models` (GET /models only). */
  fetchIntegratedModels: boolean;
  /**
   * The provider key as a client of another vendor's API sends it: `x-api-key` on /v1/messages (the Anthropic
   * SDK, Claude Code), `x-goog-api-key` or `?key=` on the Gemini routes. Set by those routes' handlers; it
   * stands where `Authorization: Bearer` stands on OpenAI's routes, and wins over it.
   */
  providerKey?: string;
}

const SPAN_PATTERN = /^[\w.:@/+=-]{1,128}$/;

/**
 * Reads the gateway headers in one pass over the request headers (cheap: no JSON work unless metadata or
 * a header list is present). `x-gateway-*` wins over its `x-portkey-*` alias.
 */
export function parseGatewayHeaders(headers: HeaderSource, traceId = traceIdOf(headers)): GatewayRequestHeaders {
  const raw = new Map<string, string>();
  const aliases = new Map<string, string>();
  for (const [name, value] of headers) {
    if (name.startsWith("x-gateway-")) raw.set(name.slice(10), value);
    else if (name.startsWith("x-portkey-")) aliases.set(name.slice(10), value);
  }
  for (const [key, value] of aliases) if (!raw.has(key)) raw.set(key, value);
  const parsed: GatewayRequestHeaders = {
    traceId,
    values: raw,
    forwardHeaders: [],
    sensitiveHeaders: [],
    beta: [],
    cacheForceRefresh: false,
    fetchIntegratedModels: false,
  };
  if (raw.size === 0) return parsed;

  const metadata = raw.get("metadata");
  if (metadata !== undefined) parsed.metadata = parseMetadata(metadata);
  const config = raw.get("config")?.trim();
  if (config) parsed.config = config;
  const provider = raw.get("provider")?.trim();
  if (provider) parsed.provider = provider;
  const virtualKey = raw.get("virtual-key")?.trim();
  if (virtualKey) parsed.virtualKey = virtualKey;
  const customHost = raw.get("custom-host")?.trim();
  if (customHost) parsed.customHost = customHost;
  const timeout = raw.get("request-timeout");
  if (timeout !== undefined) parsed.requestTimeoutMs = parseTimeout(timeout);
  const sensitive = raw.get("sensitive-headers");
  if (sensitive) parsed.sensitiveHeaders = parseHeaderList(sensitive).map((name) => name.toLowerCase());
  const forward = raw.get("forward-headers");
  if (forward) {
    const hidden = new Set(parsed.sensitiveHeaders);
    parsed.forwardHeaders = parseHeaderList(forward).filter(
      (name) => !hidden.has(name.toLowerCase()) && isForwardable(name),
    );
  }
  const beta = raw.get("beta");
  if (beta)
    parsed.beta = beta
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean);
  for (const [header, field] of [
    ["span-id", "spanId"],
    ["parent-span-id", "parentSpanId"],
  ] as const) {
    const value = raw.get(header)?.trim();
    if (value === undefined || value === "") continue;
    if (!SPAN_PATTERN.test(value)) {
      throw badRequest(
        `x-gateway-${header} must be 1 to 128 characters of letters, digits and . : @ / + = - _`,
        `x-gateway-${header}`,
        "invalid_header",
      );
    }
    parsed[field] = value;
  }
  const spanName = raw.get("span-name")?.trim();
  if (spanName) {
    if (spanName.length > 256)
      throw badRequest("x-gateway-span-name is longer than 256 characters.", "x-gateway-span-name", "invalid_header");
    parsed.spanName = spanName;
  }
  const refresh = raw.get("cache-force-refresh");
  if (refresh !== undefined) parsed.cacheForceRefresh = parseBooleanHeader(refresh, "cache-force-refresh");
  const namespace = raw.get("cache-namespace");
  if (namespace !== undefined) parsed.cacheNamespace = parseNamespace(namespace);
  parsed.fetchIntegratedModels = raw.get("fetch-integrated-models")?.trim().toLowerCase() === "true";
  return parsed;
}

/** `true` or `false` (any case); anything else answers 400 naming the header. */
function parseBooleanHeader(value: string, name: string): boolean {
  const lower = value.trim().toLowerCase();
  if (lower === "true") return true;
  if (lower === "false") return false;
  throw badRequest(`x-gateway-${name} must be true or false.`, `x-gateway-${name}`, "invalid_header");
}

/** A cache namespace is part of every cache key of the request: a bounded, printable token. */
export const CACHE_NAMESPACE_PATTERN = /^[\x21-\x7e]{1,128}$/;

function parseNamespace(value: string): string | undefined {
  const namespace = value.trim();
  if (namespace === "") return undefined;
  if (!CACHE_NAMESPACE_PATTERN.test(namespace)) {
    throw badRequest(
      "x-gateway-cache-namespace must be 1 to 128 printable ASCII characters without spaces.",
      "x-gateway-cache-namespace",
      "invalid_header",
    );
  }
  return namespace;
}

/** Timers hold at most 2^31-1 ms: a longer timeout would fire at once. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

function parseTimeout(value: string): number {
  const ms = Number(value.trim());
  if (!Number.isInteger(ms) || ms <= 0 || ms > MAX_TIMEOUT_MS) {
    throw badRequest(
      `x-gateway-request-timeout must be a positive integer of milliseconds, at most ${MAX_TIMEOUT_MS}.`,
      "x-gateway-request-timeout",
      "invalid_header",
    );
  }
  return ms;
}

/** `x-gateway-metadata`: a JSON object of at most 16 string values (spec 2.8); anything else answers 400. */
export function parseMetadata(value: string): Record<string, string> | undefined {
  const param = "x-gateway-metadata";
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw badRequest("x-gateway-metadata must be a JSON object of string values.", param, "invalid_metadata");
  }
  if (parsed === null) return undefined;
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    throw badRequest("x-gateway-metadata must be a JSON object of string values.", param, "invalid_metadata");
  }
  const entries = Object.entries(parsed as Record<string, unknown>);
  if (entries.length > METADATA_LIMITS.pairs) {
    throw badRequest(
      `x-gateway-metadata has ${entries.length} keys; at most ${METADATA_LIMITS.pairs} are allowed.`,
      param,
      "invalid_metadata",
    );
  }
  const metadata: Record<string, string> = {};
  for (const [key, item] of entries) {
    if (key.length === 0 || key.length > METADATA_LIMITS.keyLength) {
      throw badRequest(
        `x-gateway-metadata key '${key.slice(0, 80)}' must be 1 to ${METADATA_LIMITS.keyLength} characters.`,
        `${param}.${key.slice(0, 80)}`,
        "invalid_metadata",
      );
    }
    if (typeof item !== "string") {
      throw badRequest(`x-gateway-metadata value of '${key}' must be a string.`, `${param}.${key}`, "invalid_metadata");
    }
    if (item.length > METADATA_LIMITS.valueLength) {
      throw badRequest(
        `x-gateway-metadata value of '${key}' is longer than ${METADATA_LIMITS.valueLength} characters.`,
        `${param}.${key}`,
        "invalid_metadata",
      );
    }
    metadata[key] = item;
  }
  return metadata;
}

/** Connection and framing headers: the gateway's own business on each hop, never a forwarded value. */
export const HOP_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "content-type",
  "expect",
  "proxy-connection",
]);

/** An HTTP header name (a token): anything else is no header a request can carry, and Headers.get throws on it. */
export const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Whether `x-gateway-forward-headers` (or a config's `forward_headers`) may pass a header to the provider:
 * never a credential (the caller's gateway key, cookies, Authorization), never the gateway's own
 * `x-gateway-*` / `x-portkey-*` headers, never a hop-by-hop or framing header.
 */
export function isForwardable(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    HTTP_TOKEN.test(name) &&
    !lower.startsWith("x-gateway-") &&
    !lower.startsWith("x-portkey-") &&
    !HOP_HEADERS.has(lower) &&
    !isCredentialHeader(lower)
  );
}

/** A header list is sent as JSON array or comma-separated names. */
export function parseHeaderList(value: string): string[] {
  const trimmed = value.trim();
  if (trimmed.startsWith("[")) {
    try {
      const parsed = JSON.parse(trimmed);
      if (Array.isArray(parsed))
        return parsed
          .map(String)
          .map((name) => name.trim())
          .filter(Boolean);
    } catch {
      // fall through to the comma form
    }
  }
  return trimmed
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
}

export const MASKED = "[masked]";

/**
 * The request headers as logs may record them: credentials (Authorization, provider keys, cloud secrets,
 * session tokens) and ORGANISATION_HEADERS_TO_MASK masked; `x-gateway-sensitive-headers` hashed
 * (`sha256:` + the first 16 hex digits, so equal values can still be correlated); api keys inside an inline
 * `x-gateway-config` masked.
 */
export function headersForLog(
  headers: HeaderSource,
  options: { sensitiveHeaders?: string[]; organisationHeadersToMask?: string[] } = {},
): Record<string, string> {
  const sensitive = lowerCaseSet(options.sensitiveHeaders);
  const masked = lowerCaseSet(options.organisationHeadersToMask);
  const out: Record<string, string> = {};
  for (const [name, value] of headers) {
    if (sensitive?.has(name)) out[name] = `sha256:${sha256Hex(value).slice(0, 16)}`;
    else if (masked?.has(name) || isCredentialHeaderCached(name)) out[name] = MASKED;
    else if (name === "x-gateway-config" || name === "x-portkey-config") out[name] = maskedConfigOf(value);
    else out[name] = value;
  }
  return out;
}

function lowerCaseSet(names: string[] | undefined): Set<string> | undefined {
  return names && names.length > 0 ? new Set(names.map((name) => name.toLowerCase())) : undefined;
}

/**
 * Whether a header name carries a credential; remembered per name (requests repeat the same few names). Names
 * come from callers and may be long: bounded by bytes as well as entries.
 */
const credentialNames = new TtlCache<string, boolean>({
  ttlMs: Number.POSITIVE_INFINITY,
  maxEntries: 1_000,
  maxBytes: 512 * 1024,
});

function isCredentialHeaderCached(name: string): boolean {
  let credential = credentialNames.get(name);
  if (credential === undefined) {
    credential = isCredentialHeader(name);
    credentialNames.set(name, credential);
  }
  return credential;
}

/**
 * Inline configs as logged, by the header's value: a client sends the same config on every request, and masking
 * parses and serialises it again each time (2-3% of a cache hit). Bounded like the compiled configs' cache.
 */
const maskedConfigs = new TtlCache<string, string>({
  ttlMs: Number.POSITIVE_INFINITY,
  maxEntries: 1_000,
  maxBytes: 4 * 1024 * 1024,
  sizeOf: (value, masked) => 2 * (value.length + masked.length),
});

function maskedConfigOf(value: string): string {
  let masked = maskedConfigs.get(value);
  if (masked === undefined) {
    masked = maskConfigSecrets(value);
    maskedConfigs.set(value, masked);
  }
  return masked;
}

function maskConfigSecrets(value: string): string {
  const json = inlineConfigJson(value);
  if (json === undefined) return value; // a saved config id or slug
  try {
    return JSON.stringify(JSON.parse(json), (key, item) => {
      if (item === null || item === undefined) return item;
      if (isCredentialField(key)) return MASKED;
      // A guardrail check's `headers` (a webhook's) are its credentials, whatever they are called.
      if (key === "headers") return typeof item === "object" ? maskedValues(item) : MASKED;
      return item;
    });
  } catch {
    return MASKED;
  }
}

function maskedValues(object: object): Record<string, string> | string {
  if (Array.isArray(object)) return MASKED;
  return Object.fromEntries(Object.keys(object).map((name) => [name, MASKED]));
}

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * The JSON text of an inline `x-gateway-config` (sent as JSON, or as base64 of JSON as some SDKs do), or
 * undefined when the value is a saved config id or slug.
 */
export function inlineConfigJson(value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed.startsWith("{")) return trimmed;
  if (trimmed.length < 4 || !BASE64.test(trimmed)) return undefined;
  const decoded = Buffer.from(trimmed, "base64").toString("utf8").trim();
  return decoded.startsWith("{") ? decoded : undefined;
}
