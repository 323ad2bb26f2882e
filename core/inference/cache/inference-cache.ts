import type { Cost } from "../catalog/cost.ts";
import type { InferenceOutcome } from "../gateway/outcome.ts";
import { SSE_HEADERS } from "../gateway/stream/sse-source.ts";
import { StreamTranscript } from "../gateway/stream/transcript.ts";
import type { RequestContext } from "../../services.ts";
import { sha256Hex } from "../../util/ids.ts";
import { isLateJson, type LateJson, type LatePayload } from "../../observe/logs/late-json.ts";
import type { ProviderTarget, RouteKind } from "../../providers/types.ts";
import type { CacheSettings, ConfigNode } from "../routing/config.ts";
import { type CacheScope, cacheKey, cacheScopeOf, canonicalBody, targetIdentity } from "./cache-key.ts";
import type { CacheEntry } from "./cache-store.ts";
import { isCompleteAnswer, replayAsSse } from "./replay.ts";
import type { ResponseCache } from "./response-cache.ts";
import { semanticSplit } from "./semantic-split.ts";
import { loadedFormat } from "../formats/registry.ts";
import { typedEventSse } from "../gateway/stream/pipelines.ts";

/**
 * Pipeline step 5 for OpenAI-shaped inference (chat, completions, embeddings, and any family that opts in):
 * wraps one leaf's upstream call. Looks the request up before calling (simple: the exact key; semantic: then
 * the nearest vector of its scope), answers a hit without calling the provider, and after a successful answer
 * (the outcome's `done`: a whole JSON body, or a stream that ended with every choice finished) stores it.
 * Sets outcome.cacheStatus: HIT, SEMANTIC HIT, MISS, REFRESH or DISABLED.
 */

export const CACHE_STATUS = {
  hit: "HIT",
  semanticHit: "SEMANTIC HIT",
  miss: "MISS",
  refresh: "REFRESH",
  disabled: "DISABLED",
} as const;

/** Embeds a text through the gateway's own embeddings pipeline (inference.ts provides it). */
export type Embedder = (config: ConfigNode, model: string, text: string) => Promise<Float32Array | undefined>;

export interface CachedCall {
  ctx: RequestContext;
  /** The family (route kind) the request belongs to: part of the key. */
  family: string;
  settings: CacheSettings | undefined;
  target: ProviderTarget;
  /** The body sent to the provider (params applied). */
  body: Record<string, any>;
  outcome: InferenceOutcome & { finish(): void };
  embed?: Embedder;
}

const NO_COST: Cost = Object.freeze({ total: 0, input: 0, output: 0, priced: true });

/**
 * The cache of a call and the request's scope in it (its organisation, workspace and namespace), or undefined,
 * its status set to DISABLED, where the call is not cached (no cache settings, no cache, no caller).
 */
export function openCache(call: {
  ctx: RequestContext;
  settings: CacheSettings | undefined;
  outcome: InferenceOutcome;
}): { cache: ResponseCache; settings: CacheSettings; scope: CacheScope; refresh: boolean } | undefined {
  const { ctx, settings, outcome } = call;
  const cache = ctx.services.cache;
  const principal = ctx.principal;
  if (!settings || !cache || !principal) {
    outcome.cacheStatus = CACHE_STATUS.disabled;
    return undefined;
  }
  const gateway = ctx.gateway;
  const scope = cacheScopeOf(principal, gateway?.cacheNamespace);
  return { cache, settings, scope, refresh: gateway?.cacheForceRefresh === true };
}

export async function cachedInference(call: CachedCall, upstream: () => Promise<Response>): Promise<Response> {
  const { ctx, outcome } = call;
  const open = openCache(call);
  if (!open) return upstream();
  const { cache, settings, scope, refresh } = open;
  const identity = targetIdentity(call.target);
  const key = cacheKey(scope, call.family, identity, canonicalBody(call.body));
  if (!refresh) {
    const entry = await cache.store.get(scope, key).catch(storeFailed);
    if (entry) return serveHit(call, entry, CACHE_STATUS.hit);
  }
  const semantic = await semanticLookup(call, scope, identity);
  if (semantic?.entry && !refresh) return serveHit(call, semantic.entry, CACHE_STATUS.semanticHit);
  outcome.cacheStatus = refresh ? CACHE_STATUS.refresh : CACHE_STATUS.miss;
  const response = await upstream();
  const maxAge = settings.maxAgeSeconds ?? cache.defaultMaxAgeSeconds;
  ctx.waitUntil(
    outcome.done
      .then(() => storeAnswer(call, scope, key, maxAge, semantic))
      .catch((error) => console.error(`[${ctx.traceId}] cache write failed`, error)),
  );
  return response;
}

interface SemanticState {
  scope: string;
  vector: Float32Array;
  entry?: CacheEntry;
}

/**
 * Semantic mode: embeds the part compared by meaning and asks the index for the nearest entry of the scope
 * (everything else must match exactly). The vector is kept to index the answer after a miss. Without an
 * index, an embedding target or a part to compare by meaning, semantic mode caches exact matches only.
 */
async function semanticLookup(
  call: CachedCall,
  scope: CacheScope,
  identity: unknown[],
): Promise<SemanticState | undefined> {
  const { settings, ctx } = call;
  const index = ctx.services.cache?.semanticIndex;
  if (settings?.mode !== "semantic" || !settings.embedding || !index || !call.embed) return undefined;
  const split = semanticSplit(call.family, call.body);
  if (!split) return undefined;
  const vector = await call.embed(settings.embedding.config, settings.embedding.model, split.text);
  if (!vector) return undefined;
  const semanticScope = sha256Hex(
    JSON.stringify(["semantic-v1", settings.embedding.model, cacheKey(scope, call.family, identity, split.exact)]),
  );
  const state: SemanticState = { scope: semanticScope, vector };
  if (ctx.gateway?.cacheForceRefresh) return state;
  const nearest = await index.nearest(semanticScope, vector, settings.similarityThreshold).catch(storeFailed);
  if (!nearest) return state;
  const entry = await ctx.services.cache!.store.get(scope, nearest.id).catch(storeFailed);
  if (entry) state.entry = entry;
  else await index.remove(semanticScope, nearest.id).catch(storeFailed);
  return state;
}

function storeFailed(error: unknown): undefined {
  // A cache that cannot be read is a miss, not a failed request.
  console.error("cache store failed", error);
  return undefined;
}

/** Answers a cached entry in the shape the request asks for (JSON, or a replayed stream). */
function serveHit(call: CachedCall, entry: CacheEntry, status: string): Response {
  const { outcome, ctx, body } = call;
  const provider = entry.provider ?? call.target.provider;
  outcome.cacheStatus = status;
  outcome.provider = provider;
  outcome.answeredModel = entry.model;
  outcome.status = 200;
  outcome.cost = NO_COST;
  outcome.cacheSavedCost = entry.cost;
  let response: Response;
  const format = loadedFormat(call.family as RouteKind);
  if (body.stream === true && format) {
    // An event-typed format's answer, replayed as the events that spell it.
    const answer = JSON.parse(entry.body) as Record<string, any>;
    const sse = format.replay(answer).map(typedEventSse).join("");
    outcome.responseBody = answer;
    outcome.responseChars = sse.length;
    response = new Response(sse, { status: 200, headers: { ...SSE_HEADERS, "x-gateway-provider": provider } });
  } else if (body.stream === true && (call.family === "chat" || call.family === "completions")) {
    const answer = JSON.parse(entry.body) as Record<string, any>;
    const sse = replayAsSse(answer, body.stream_options?.include_usage === true);
    outcome.responseBody = answer;
    outcome.responseChars = sse.length;
    response = new Response(sse, { status: 200, headers: { ...SSE_HEADERS, "x-gateway-provider": provider } });
  } else {
    outcome.responseBody = new CachedJson(entry.body);
    outcome.responseChars = entry.body.length;
    response = new Response(entry.body, {
      status: 200,
      headers: { "content-type": "application/json", "x-gateway-provider": provider },
    });
  }
  outcome.totalMs = performance.now() - ctx.startedAt;
  outcome.finish();
  return response;
}

/** A cached answer's JSON text for the log: parsed only if a sink needs the value (the local one does not). */
class CachedJson implements LateJson {
  readonly late: LatePayload;
  constructor(text: string) {
    this.late = { kind: "json-text", text };
  }
  toJSON(): unknown {
    return JSON.parse((this.late as { text: string }).text);
  }
}

/** After the answer is complete: stores it when it succeeded whole and fits under the size cap. */
async function storeAnswer(
  call: CachedCall,
  scope: CacheScope,
  key: string,
  maxAgeSeconds: number,
  semantic: SemanticState | undefined,
): Promise<void> {
  const { outcome, ctx } = call;
  if (outcome.error || outcome.status !== 200) return;
  const text = answerText(outcome);
  if (text === undefined) return;
  const cache = ctx.services.cache!;
  const stored = await cache.store.put(
    scope,
    key,
    {
      kind: "openai",
      body: text,
      provider: outcome.provider,
      model: outcome.answeredModel,
      cost: outcome.cost?.priced ? outcome.cost.total : undefined,
    },
    maxAgeSeconds,
  );
  if (stored && semantic && cache.semanticIndex) {
    // An index that cannot take this vector (a dimension it has no index for) leaves the exact entry usable.
    await cache.semanticIndex
      .add(semantic.scope, key, semantic.vector, Date.now() + maxAgeSeconds * 1000)
      .catch(storeFailed);
  }
}

/** The JSON text of a complete answer; undefined for a stream cut short or an answer with no body. */
function answerText(outcome: InferenceOutcome): string | undefined {
  const body = outcome.responseBody;
  // No body, or a text answer relayed as it came (a transcript in text, SRT or VTT): not a JSON answer to replay.
  if (body === undefined || body === null || typeof body === "string") return undefined;
  if (!outcome.stream) {
    const format = loadedFormat(outcome.route);
    if (format) {
      const answer = (isLateJson(body) ? body.toJSON() : body) as Record<string, any>;
      return format.isComplete(answer) ? JSON.stringify(answer) : undefined;
    }
    if (isLateJson(body) && body.late.kind === "json-text") return body.late.text;
    return JSON.stringify(isLateJson(body) ? body.toJSON() : body);
  }
  // A stream: the answer its chunks spell, with the usage the gateway learnt (reported or counted).
  const assembled = (body instanceof StreamTranscript ? body.assemble() : body) as Record<string, any>;
  const format = loadedFormat(outcome.route);
  if (format) return format.isComplete(assembled) ? JSON.stringify(assembled) : undefined;
  if (typeof assembled !== "object" || !isCompleteAnswer(assembled)) return undefined;
  const { streamed_chunks: _chunks, ...answer } = assembled;
  if (outcome.usage) answer.usage = outcome.usage;
  return JSON.stringify(answer);
}
