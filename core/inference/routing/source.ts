import type { RequestContext } from "../../services.ts";
import { HttpError, badRequest } from "../../http/errors.ts";
import { checkJsonDepth } from "../../http/json.ts";
import { type GatewayRequestHeaders, inlineConfigJson } from "../../http/gateway-headers.ts";
import { configHasGuardrails, validateConfigGuardrails } from "../guardrails/config-guardrails.ts";
import type { TrustedHosts } from "../../security/custom-host.ts";
import { sha256Hex } from "../../util/ids.ts";
import { TtlCache } from "../../util/ttl-cache.ts";
import { type ConfigNode, type LeafNode, compileConfig } from "./config.ts";
import { loadRegexEngine, needsRegexEngine } from "./query.ts";

/**
 * Where a request's routing comes from (pipeline step 2), in this order:
 * 1. `x-gateway-config`: inline JSON (or base64 of it), or a saved config id / slug (Services.resolveSavedConfig);
 * 2. `x-gateway-provider` (id or `@slug`) / `x-gateway-virtual-key`: one target built from the headers;
 * 3. the API key's own default config (`defaults.config_id` of the key), else the workspace's default config
 *    (Services.resolveDefaultConfig): the key's is the more specific choice, so it wins;
 * else undefined (the route answers "no provider").
 * Inline configs are compiled once and cached by their text (bounded LRU), their guardrails' check parameters
 * validated before they are cached; saved ones by object identity, so
 * a control plane that caches its config objects gets compiled configs for free.
 * BLOCK_INLINE_CONFIG=true (or the organisation setting `block_inline_config`) rejects inline configs, inline provider names and custom hosts (403); saved
 * configs and saved providers (`@slug`, x-gateway-virtual-key) stay allowed.
 */

/** The single target of a request without config: resolved from the request headers. Shared, never mutated. */
export const HEADER_TARGET: LeafNode = Object.freeze({
  kind: "leaf",
  path: "config",
  weight: 1,
  settings: Object.freeze({}),
  fromHeaders: true,
}) as LeafNode;

const INLINE_CACHE_SIZE = 500;
const INLINE_CACHE_BYTES = 16 * 1024 * 1024;
const SAVED_ID = /^[\w.:@-]{1,128}$/;

interface Caches {
  /** Compiled inline configs by a hash of their JSON (which may hold provider keys: never the key of a cache). */
  inline: TtlCache<string, { node: ConfigNode; jsonLength: number }>;
  saved: WeakMap<object, ConfigNode>;
}
const cachesByTrust = new WeakMap<TrustedHosts, Caches>();

function cachesFor(trusted: TrustedHosts): Caches {
  let caches = cachesByTrust.get(trusted);
  if (!caches) {
    caches = {
      inline: new TtlCache({
        ttlMs: Infinity,
        maxEntries: INLINE_CACHE_SIZE,
        maxBytes: INLINE_CACHE_BYTES,
        // A compiled config holds a few times its JSON's characters.
        sizeOf: (_hash, entry) => 256 + entry.jsonLength * 8,
      }),
      saved: new WeakMap(),
    };
    cachesByTrust.set(trusted, caches);
  }
  return caches;
}

/** The answer to a request that names no provider or config, where its workspace has no default config either. */
export const noProviderSelected = () =>
  badRequest(
    "No provider selected: send x-gateway-provider with Authorization, or x-gateway-config.",
    "x-gateway-provider",
    "missing_provider",
  );

/** The request's routing (resolveRouting below), or noProviderSelected when there is none. */
export async function requireRouting(gateway: GatewayRequestHeaders, ctx: RequestContext): Promise<ConfigNode> {
  const config = await resolveRouting(gateway, ctx);
  if (!config) throw noProviderSelected();
  return config;
}

export async function resolveRouting(
  gateway: GatewayRequestHeaders,
  ctx: RequestContext,
): Promise<ConfigNode | undefined> {
  const { services } = ctx;
  // Env BLOCK_INLINE_CONFIG forces it; else the organisation setting, read only when something is inline.
  const blocked = async () => services.settings.BLOCK_INLINE_CONFIG || (await organisationBlocksInline(ctx));
  if (gateway.config !== undefined) {
    const json = inlineConfigJson(gateway.config);
    if (json !== undefined) {
      if (await blocked()) throw inlineBlocked("an inline x-gateway-config", "x-gateway-config");
      return await inlineConfig(json, services.trustedHosts);
    }
    if (!SAVED_ID.test(gateway.config)) {
      throw badRequest(
        "x-gateway-config must be a JSON object (or base64 of one), or a saved config id or slug.",
        "x-gateway-config",
        "invalid_config",
      );
    }
    return await savedConfig(
      await services.resolveSavedConfig(gateway.config, ctx),
      services.trustedHosts,
      `x-gateway-config(${gateway.config})`,
    );
  }
  if (gateway.provider !== undefined || gateway.virtualKey !== undefined) {
    const inline =
      (gateway.provider !== undefined && !gateway.provider.startsWith("@")) || gateway.customHost !== undefined;
    if (inline && (await blocked())) {
      if (gateway.provider !== undefined && !gateway.provider.startsWith("@"))
        throw inlineBlocked("an inline provider name", "x-gateway-provider");
      if (gateway.customHost !== undefined) throw inlineBlocked("a custom host", "x-gateway-custom-host");
    }
    return HEADER_TARGET;
  }
  const keyDefault = await keyDefaultConfig(ctx);
  if (keyDefault !== undefined) return savedConfig(keyDefault, services.trustedHosts, "the API key's default config");
  const fallback = await services.resolveDefaultConfig(ctx);
  return fallback === undefined || fallback === null
    ? undefined
    : await savedConfig(fallback, services.trustedHosts, "default config");
}

/**
 * The calling key's default config, if it has one. A config deleted since is skipped (the workspace default
 * applies), as a workspace default naming a deleted config is.
 */
async function keyDefaultConfig(ctx: RequestContext): Promise<unknown | undefined> {
  const configId = ctx.principal?.defaultConfigId;
  if (!configId) return undefined;
  try {
    return (await ctx.services.resolveSavedConfig(configId, ctx)) ?? undefined;
  } catch (error) {
    if (error instanceof HttpError && error.status === 404) return undefined;
    throw error;
  }
}

/** The organisation's `block_inline_config` setting, through the short-lived settings cache (no read per request). */
async function organisationBlocksInline(ctx: RequestContext): Promise<boolean> {
  const organisationId = ctx.principal?.organisationId;
  if (!organisationId || !ctx.services.orgSettings) return false;
  return ctx.services.orgSettings.blockInlineConfig(organisationId, ctx.principal?.workspaceId);
}

async function inlineConfig(json: string, trusted: TrustedHosts): Promise<ConfigNode> {
  const caches = cachesFor(trusted);
  const hash = sha256Hex(json);
  const cached = caches.inline.get(hash);
  if (cached) return cached.node;
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error) {
    throw badRequest(
      `x-gateway-config is not valid JSON: ${(error as Error).message}`,
      "x-gateway-config",
      "invalid_config",
    );
  }
  checkJsonDepth(raw, "x-gateway-config", "x-gateway-config");
  if (needsRegexEngine(json)) await loadRegexEngine();
  const compiled = compileConfig(raw, trusted);
  // Inline check parameters are checked once per compiled config (saved configs were when they were saved).
  if (configHasGuardrails(compiled)) await validateConfigGuardrails(compiled, "x-gateway-config");
  caches.inline.set(hash, { node: compiled, jsonLength: json.length });
  return compiled;
}

async function savedConfig(raw: unknown, trusted: TrustedHosts, param: string): Promise<ConfigNode> {
  const cacheable = typeof raw === "object" && raw !== null;
  const caches = cachesFor(trusted);
  const cached = cacheable ? caches.saved.get(raw) : undefined;
  if (cached) return cached;
  if (needsRegexEngine(JSON.stringify(raw) ?? "")) await loadRegexEngine();
  const compiled = compileConfig(raw, trusted, param);
  if (cacheable) caches.saved.set(raw, compiled);
  return compiled;
}

function inlineBlocked(what: string, param: string): HttpError {
  return new HttpError(
    403,
    `Inline configuration is blocked in this deployment (BLOCK_INLINE_CONFIG): ${what} is not accepted. Use a saved config or a saved provider (@slug).`,
    {
      code: "inline_config_blocked",
      param,
    },
  );
}
