import type { InferenceOutcome } from "../gateway/outcome.ts";
import type { RequestContext } from "../http/context.ts";
import { sha256Hex } from "../ids.ts";
import type { ProviderTarget } from "../providers/types.ts";
import type { CacheSettings } from "../routing/config.ts";
import { cacheKey, cacheScopeOf, canonicalBody, sortedEntries, targetIdentity } from "./cache-key.ts";
import { CACHE_STATUS } from "./inference-cache.ts";

/**
 * The cache step of pass-through routes: the key is the method, the provider path with its query, the body
 * (canonical JSON when it is a JSON object, else its bytes' hash) and the client headers forwarded with it, for
 * the target that answers (cache-key.ts: provider, host, integration, account). A 200 answer is
 * stored as the provider sent it (status, headers, bytes) once its body has been relayed to the end; a body
 * cut short, failed or cancelled by the client never is, and neither is one over the size cap.
 */
export interface PassthroughCachedCall {
  ctx: RequestContext;
  settings: CacheSettings | undefined;
  target: ProviderTarget;
  method: string;
  /** The provider path and query. */
  path: string;
  json: Record<string, unknown> | null;
  bytes: Uint8Array | undefined;
  /** The client's headers forwarded to the provider (`anthropic-version`, `openai-beta`... change the answer). */
  headers: Record<string, string>;
  outcome: InferenceOutcome & { finish(): void };
}

/**
 * Forwarded request headers that describe the client or one delivery, not the question: left out of the key so
 * that the same request from another SDK version, trace or retry still hits.
 */
const NOT_KEYED = new Set([
  "user-agent",
  "accept",
  "content-type",
  "traceparent",
  "tracestate",
  "baggage",
  "x-request-id",
  "idempotency-key",
  "origin",
  "referer",
]);

/** The forwarded headers that are part of the key (sorted; client-describing ones and `x-stainless-*` left out). */
function keyedHeaders(headers: Record<string, string>): Array<[string, string]> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (!NOT_KEYED.has(name) && !name.startsWith("x-stainless-")) kept[name] = value;
  return sortedEntries(kept);
}

/** Response headers that describe one delivery, not the answer: never replayed. */
const NOT_REPLAYED = new Set([
  "date",
  "set-cookie",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "trailer",
  "upgrade",
  "proxy-connection",
]);

export async function cachedPassthrough(
  call: PassthroughCachedCall,
  upstream: () => Promise<Response>,
): Promise<Response> {
  const { ctx, settings, outcome } = call;
  const cache = ctx.services.cache;
  const principal = ctx.principal;
  if (!settings || !cache || !principal) {
    outcome.cacheStatus = CACHE_STATUS.disabled;
    return upstream();
  }
  const gateway = ctx.gateway;
  const scope = cacheScopeOf(principal, gateway?.cacheNamespace);
  const request = call.json
    ? canonicalBody(call.json)
    : call.bytes
      ? `sha256:${sha256Hex(Buffer.from(call.bytes).toString("base64"))}`
      : "";
  const identity = [...targetIdentity(call.target), keyedHeaders(call.headers)];
  const key = cacheKey(scope, "passthrough", identity, `${call.method} ${call.path}\n${request}`);
  const refresh = gateway?.cacheForceRefresh === true;
  if (!refresh) {
    const entry = await cache.store.get(scope, key).catch(() => undefined);
    if (entry?.kind === "raw") {
      outcome.cacheStatus = CACHE_STATUS.hit;
      outcome.provider = entry.provider ?? call.target.provider;
      outcome.status = entry.status ?? 200;
      outcome.cost = { total: 0, input: 0, output: 0, priced: true };
      outcome.cacheSavedCost = entry.cost;
      outcome.totalMs = performance.now() - ctx.startedAt;
      outcome.finish();
      const body = Buffer.from(entry.body, "base64");
      return new Response(body.byteLength > 0 ? body : null, { status: outcome.status, headers: entry.headers });
    }
  }
  outcome.cacheStatus = refresh ? CACHE_STATUS.refresh : CACHE_STATUS.miss;
  const response = await upstream();
  if (response.status !== 200 || !response.body) return response;
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) if (!NOT_REPLAYED.has(name)) headers[name] = value;
  const maxAgeSeconds = settings.maxAgeSeconds ?? cache.defaultMaxAgeSeconds;
  const chunks: Uint8Array[] = [];
  let size = 0;
  let tooLarge = false;
  // Relays the body as it comes, keeping a copy until the cap; stored only once the body ended whole.
  const copy = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (!tooLarge) {
        size += chunk.byteLength;
        // base64 grows the body by a third: the cap applies to what is stored.
        if (cache.store.fits(Math.ceil(size / 3) * 4)) chunks.push(chunk);
        else {
          tooLarge = true;
          chunks.length = 0;
        }
      }
      controller.enqueue(chunk);
    },
    flush() {
      if (tooLarge) return;
      const answer = {
        kind: "raw" as const,
        body: Buffer.concat(chunks).toString("base64"),
        status: 200,
        headers,
        provider: outcome.provider,
      };
      ctx.waitUntil(
        cache.store
          .put(scope, key, answer, maxAgeSeconds)
          .catch((error) => console.error(`[${ctx.traceId}] cache write failed`, error)),
      );
    },
  });
  return new Response(response.body.pipeThrough(copy), { status: response.status, headers: response.headers });
}
