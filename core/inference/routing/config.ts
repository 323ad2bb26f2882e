import * as z from "zod/mini";
import {
  type ConfigGuardrails,
  GUARDRAIL_CONFIG_KEYS,
  compileNodeGuardrails,
} from "../guardrails/config-guardrails.ts";
import { badRequest } from "../../http/errors.ts";
import { validate } from "../../http/json.ts";
import { int } from "../../http/zod-mini.ts";
import { providerIdOf } from "../../providers/registry.ts";
import type { ProviderTarget } from "../../providers/types.ts";
import { checkCustomHostSyntax, type TrustedHosts } from "../../security/custom-host.ts";
import { hostValueProblem } from "../../security/host-values.ts";
import type { ParamRules } from "./params.ts";
import { compileQuery, isPlainObject, type Predicate } from "./query.ts";

/**
 * Routing configs (spec 2.11 / 5.2; Portkey's config format): the zod schema (built on first use), and
 * `compileConfig`, which validates what zod cannot (limits, names, queries, providers, custom hosts) and
 * resolves inheritance once, so a cached compiled config costs nothing per request.
 *
 * A node is either a leaf target (`provider` and/or `virtual_key`, optional `api_key`, `custom_host`, cloud
 * fields) or a strategy (`strategy.mode` + `targets[]`, each a leaf or a nested strategy). Every node may carry
 * `retry`, `request_timeout`, `cache`, `override_params`, `default_params`, `drop_params`, `forward_headers`,
 * `custom_host`, `weight` (loadbalance) and `name` (conditional). Nested targets inherit retry, cache, params,
 * forward headers, custom host and timeout from their parent; their own values win (params merge key by key,
 * drop lists add up). camelCase keys (`overrideParams`, `onStatusCodes`, ...) are accepted as aliases.
 * Guardrails (`input_guardrails`, `output_guardrails`, `before_request_hooks`, `after_request_hooks`) are
 * compiled by core/inference/guardrails/config-guardrails.ts: a target runs its parents' and then its own. A root that
 * carries guardrails but names no provider routes to the provider of the request's headers (Portkey's usual
 * `{"input_guardrails": [...]}` config next to `x-gateway-provider` or a virtual key).
 */

export const STRATEGY_MODES = ["single", "fallback", "loadbalance", "conditional"] as const;
export type StrategyMode = (typeof STRATEGY_MODES)[number];

/** Limits (spec 8). */
export const CONFIG_LIMITS = {
  rootTargets: 100,
  rootTargetsConditional: 1000,
  nestedPerRootTarget: 50,
  depth: 10,
  retryAttempts: 5,
  /** Target names, providers, virtual keys, parameter and header names. */
  identifierLength: 128,
  urlLength: 2048,
  /** Timers hold at most 2^31-1 ms (about 24.8 days): a longer one fires at once. */
  maxTimeoutMs: 2 ** 31 - 1,
} as const;

/** Status codes retried when `retry.on_status_codes` is not given. */
export const DEFAULT_RETRY_STATUS_CODES = [429, 500, 502, 503, 504] as const;

/** A config node as the schema below outputs it (written out: the schema itself is only built on first use). */
export interface RawConfigNode {
  strategy?: {
    mode: StrategyMode;
    on_status_codes?: number[];
    conditions?: Array<{ query: Record<string, unknown>; then: string }>;
    default?: string;
  };
  targets?: RawConfigNode[];
  name?: string;
  provider?: string;
  api_key?: string;
  virtual_key?: string;
  custom_host?: string;
  weight?: number;
  override_params?: Record<string, unknown>;
  default_params?: Record<string, unknown>;
  drop_params?: string[];
  forward_headers?: string[];
  request_timeout?: number;
  retry?: { attempts: number; on_status_codes?: number[]; use_retry_after_header?: boolean };
  cache?: {
    mode: "simple" | "semantic";
    max_age?: number;
    similarity_threshold?: number;
    embedding?: Record<string, unknown>;
    [extra: string]: unknown;
  };
  resource_name?: string;
  deployment_id?: string;
  api_version?: string;
  azure_model_name?: string;
  vertex_project_id?: string;
  vertex_region?: string;
  vertex_service_account_json?: string | Record<string, unknown>;
  /** Vertex AI batch prediction: the Cloud Storage bucket its input and results go through. */
  vertex_storage_bucket?: string;
  aws_access_key_id?: string;
  aws_secret_access_key?: string;
  aws_session_token?: string;
  aws_region?: string;
  /** Bedrock batch inference: the S3 bucket its jobs use and the service role Bedrock assumes. */
  aws_s3_bucket?: string;
  aws_role_arn?: string;
  /** `assumedRole`: Bedrock calls use credentials of `aws_role_arn` assumed through STS with the target's keys. */
  aws_auth_type?: "assumedRole";
  aws_external_id?: string;
  /** Root only: how batches created with this config run (core/features/batches): the provider's batch API or the gateway. */
  batch_mode?: "native" | "gateway";
  /** Root only: `GET /v1/models` answers the integrated catalog even though this config names providers (spec 4.6). */
  fetch_integrated_models?: boolean;
  [extra: string]: unknown;
}

/**
 * The config JSON shape, built on first use: zod builds schemas eagerly, most requests carry no config, and
 * building it at import would add to every data-plane function's cold start (as would classic zod: this is
 * `zod/mini`, see core/inference/gateway/schemas/common.ts). Loose objects: fields of later features (guardrails,
 * hooks) pass untouched. Typed as ZodMiniType<RawConfigNode>: tsc checks its output.
 */
let builtSchema: z.ZodMiniType<RawConfigNode> | undefined;

function configSchema(): z.ZodMiniType<RawConfigNode> {
  builtSchema ??= buildConfigSchema();
  return builtSchema;
}

function buildConfigSchema(): z.ZodMiniType<RawConfigNode> {
  /** Classic zod's `z.number().int()`, then `checks`. */
  const statusCode = int(z.minimum(100), z.maximum(599));
  const retrySchema = z.strictObject({
    attempts: int(z.minimum(0), z.maximum(CONFIG_LIMITS.retryAttempts)),
    on_status_codes: z.optional(z.array(statusCode)),
    use_retry_after_header: z.optional(z.boolean()),
  });
  const cacheSchema = z.looseObject({
    mode: z.enum(["simple", "semantic"]),
    max_age: z.optional(
      int(z.positive(), z.maximum(CACHE_LIMITS.maxAgeSeconds, `at most ${CACHE_LIMITS.maxAgeSeconds} seconds`)),
    ),
    similarity_threshold: z.optional(z.number().check(z.gt(0), z.lte(1))),
    embedding: z.optional(z.record(z.string(), z.unknown())),
  });
  const conditionSchema = z.strictObject({
    query: z.record(z.string(), z.unknown()),
    // biome-ignore lint/suspicious/noThenProperty: `then` is the config format's name for the chosen target.
    then: z.string().check(z.minLength(1), z.maxLength(CONFIG_LIMITS.identifierLength)),
  });
  const strategySchema = z.strictObject({
    mode: z.enum(STRATEGY_MODES),
    on_status_codes: z.optional(z.array(statusCode)),
    conditions: z.optional(z.array(conditionSchema)),
    default: z.optional(z.string().check(z.minLength(1), z.maxLength(CONFIG_LIMITS.identifierLength))),
  });
  const paramsObject = z.record(z.string(), z.unknown());
  const nonEmpty = z.string().check(z.trim(), z.minLength(1));
  /** Names kept in logs, analytics and caches: bounded. */
  const identifier = nonEmpty.check(z.maxLength(CONFIG_LIMITS.identifierLength));
  const node: z.ZodMiniType<RawConfigNode> = z.lazy(() =>
    z.looseObject({
      strategy: z.optional(strategySchema),
      targets: z.optional(z.array(node).check(z.minLength(1))),
      name: z.optional(identifier),
      provider: z.optional(identifier),
      api_key: z.optional(z.string()),
      virtual_key: z.optional(identifier),
      custom_host: z.optional(nonEmpty.check(z.maxLength(CONFIG_LIMITS.urlLength))),
      weight: z.optional(z.number().check(z.minimum(0))),
      override_params: z.optional(paramsObject),
      default_params: z.optional(paramsObject),
      drop_params: z.optional(z.array(identifier)),
      forward_headers: z.optional(z.array(identifier)),
      request_timeout: z.optional(
        int(z.positive(), z.maximum(CONFIG_LIMITS.maxTimeoutMs, `at most ${CONFIG_LIMITS.maxTimeoutMs} ms`)),
      ),
      retry: z.optional(retrySchema),
      cache: z.optional(cacheSchema),
      resource_name: z.optional(nonEmpty),
      deployment_id: z.optional(nonEmpty),
      api_version: z.optional(nonEmpty),
      azure_model_name: z.optional(nonEmpty),
      vertex_project_id: z.optional(nonEmpty),
      vertex_region: z.optional(nonEmpty),
      vertex_service_account_json: z.optional(z.union([z.string(), z.record(z.string(), z.unknown())])),
      vertex_storage_bucket: z.optional(nonEmpty),
      aws_access_key_id: z.optional(nonEmpty),
      aws_secret_access_key: z.optional(nonEmpty),
      aws_session_token: z.optional(nonEmpty),
      aws_region: z.optional(nonEmpty),
      aws_s3_bucket: z.optional(nonEmpty),
      aws_role_arn: z.optional(nonEmpty),
      aws_auth_type: z.optional(z.literal("assumedRole")),
      aws_external_id: z.optional(nonEmpty),
      batch_mode: z.optional(z.enum(["native", "gateway"])),
      fetch_integrated_models: z.optional(z.boolean()),
    }),
  );
  return node;
}

export interface RetryPolicy {
  /** Retries after the first call (0 to 5). */
  attempts: number;
  onStatusCodes: readonly number[];
  useRetryAfterHeader: boolean;
}

/** Cache limits (docs/caching.md): `max_age` is at most 90 days; the default is GATEWAY_CACHE_MAX_AGE. */
export const CACHE_LIMITS = { maxAgeSeconds: 90 * 24 * 3600, defaultSimilarity: 0.95 } as const;

export interface CacheSettings {
  mode: "simple" | "semantic";
  maxAgeSeconds?: number;
  /** Semantic mode: the cosine similarity a hit needs (default 0.95). */
  similarityThreshold: number;
  /**
   * Semantic mode: where the last user messages are embedded: a config (a leaf target or a strategy),
   * called through the gateway's own embeddings pipeline, and the embedding model.
   */
  embedding?: { config: ConfigNode; model: string };
}

/** What a node passes down to its targets (and a leaf applies). */
export interface InheritedSettings extends ParamRules {
  retry?: RetryPolicy;
  requestTimeoutMs?: number;
  cache?: CacheSettings;
  forwardHeaders?: string[];
  customHost?: string;
  /** The guardrails of this node and its parents, in the order they run (core/inference/guardrails/config-guardrails.ts). */
  guardrails?: ConfigGuardrails;
}

interface NodeBase {
  /** JSON-path-like location in the config, e.g. `config.targets[1].targets[0]` (x-gateway-last-used-option-index). */
  path: string;
  name?: string;
  /** Loadbalance weight (default 1; 0 never chosen). */
  weight: number;
  settings: InheritedSettings;
  /** The root's `batch_mode` (root only): how batches created with this config run (core/features/batches/mode.ts). */
  batchMode?: "native" | "gateway";
  /** The root's `fetch_integrated_models` (root only): GET /v1/models lists the catalog (core/routes/handlers/models.ts). */
  fetchIntegratedModels?: boolean;
}

export interface LeafNode extends NodeBase {
  kind: "leaf";
  /** Registry id (lower case) or `@slug` of a saved provider. */
  provider?: string;
  virtualKey?: string;
  apiKey?: string;
  /** The target's cloud settings (core/providers/types.ts ProviderTarget); session tags come per request. */
  azure?: ProviderTarget["azure"];
  vertex?: ProviderTarget["vertex"];
  aws?: Omit<NonNullable<ProviderTarget["aws"]>, "sessionTags">;
  /** Set for the single target built from request headers (no config). */
  fromHeaders?: boolean;
}

export interface CompiledCondition {
  test: Predicate;
  then: number;
}

export interface StrategyNode extends NodeBase {
  kind: "strategy";
  mode: StrategyMode;
  /** Fallback: statuses that move on (absent: any non-2xx). */
  onStatusCodes?: ReadonlySet<number>;
  conditions?: CompiledCondition[];
  /** Conditional: index of the default target. */
  defaultTarget?: number;
  targets: ConfigNode[];
}

export type ConfigNode = LeafNode | StrategyNode;

/** Parses raw config JSON (already JSON.parse'd) into a compiled tree; every error is a 400 naming the path. */
export function compileConfig(raw: unknown, trusted: TrustedHosts, param = "x-gateway-config"): ConfigNode {
  if (!isPlainObject(raw))
    throw badRequest(`Invalid value for '${param}': a config must be a JSON object.`, param, "invalid_config");
  const parsed = validate(configSchema(), snakeCaseConfig(raw), param) as RawConfigNode;
  const root = compileNode(parsed, { path: "config", param, trusted, depth: 0, inherited: {} });
  checkLimits(root, param);
  if (parsed.batch_mode) root.batchMode = parsed.batch_mode;
  if (parsed.fetch_integrated_models) root.fetchIntegratedModels = true;
  return root;
}

interface CompileState {
  path: string;
  param: string;
  trusted: TrustedHosts;
  depth: number;
  inherited: InheritedSettings;
}

function fail(state: Pick<CompileState, "path" | "param">, suffix: string, message: string): never {
  const at = paramAt(state, suffix);
  throw badRequest(`Invalid value for '${at}': ${message}`, at, "invalid_config");
}

/** `x-gateway-config.targets[1].retry` from the node path `config.targets[1]` and a suffix `retry`. */
function paramAt(state: Pick<CompileState, "path" | "param">, suffix = ""): string {
  const local = state.path.slice("config".length).replace(/^\./, "");
  const joined = [local, suffix].filter(Boolean).join(".").replace(/\.\[/g, "[");
  return joined ? `${state.param}.${joined}` : state.param;
}

function compileNode(raw: RawConfigNode, state: CompileState): ConfigNode {
  if (state.depth > CONFIG_LIMITS.depth)
    fail(state, "targets", `configs nest at most ${CONFIG_LIMITS.depth} levels deep.`);
  if (state.depth > 0 && raw.batch_mode !== undefined)
    fail(state, "batch_mode", "batch_mode is a field of the config's root only.");
  if (state.depth > 0 && raw.fetch_integrated_models !== undefined)
    fail(state, "fetch_integrated_models", "fetch_integrated_models is a field of the config's root only.");
  const settings = inherit(raw, state);
  const base = { path: state.path, name: raw.name, weight: raw.weight ?? 1, settings };

  if (raw.targets) {
    if (raw.provider !== undefined || raw.virtual_key !== undefined || raw.api_key !== undefined) {
      fail(
        state,
        raw.provider !== undefined ? "provider" : raw.virtual_key !== undefined ? "virtual_key" : "api_key",
        "a node has either targets or a provider, not both.",
      );
    }
    if (!raw.strategy) fail(state, "strategy", "strategy.mode is required when targets are given.");
    const targets = raw.targets.map((child, index) =>
      compileNode(child, {
        ...state,
        path: `${state.path}.targets[${index}]`,
        depth: state.depth + 1,
        inherited: settings,
      }),
    );
    const node: StrategyNode = { ...base, kind: "strategy", mode: raw.strategy.mode, targets };
    if (raw.strategy.on_status_codes) node.onStatusCodes = new Set(raw.strategy.on_status_codes);
    if (raw.strategy.mode === "loadbalance" && !targets.some((target) => target.weight > 0)) {
      fail(state, "targets", "a loadbalance strategy needs at least one target with a weight above 0.");
    }
    if (raw.strategy.mode === "conditional") compileConditions(raw, node, state);
    return node;
  }

  if (raw.strategy && raw.strategy.mode !== "single")
    fail(state, "targets", `strategy mode '${raw.strategy.mode}' needs targets.`);
  if (raw.provider === undefined && raw.virtual_key === undefined) {
    if (state.depth === 0 && settings.guardrails && !LEAF_TARGET_FIELDS.some((field) => raw[field] !== undefined))
      return { ...base, kind: "leaf", fromHeaders: true };
    fail(state, "provider", "a target needs provider (a provider id or @slug), virtual_key, or targets.");
  }
  const leaf: LeafNode = { ...base, kind: "leaf" };
  if (raw.provider !== undefined) {
    const provider = raw.provider.trim();
    if (provider.startsWith("@")) leaf.provider = provider;
    else if (providerIdOf(provider)) leaf.provider = provider.toLowerCase();
    else fail(state, "provider", `unknown provider '${provider}'. docs/providers.md lists the supported provider ids.`);
  }
  if (raw.virtual_key !== undefined) leaf.virtualKey = raw.virtual_key;
  for (const field of ["aws_region", "vertex_region", "vertex_project_id", "resource_name"] as const) {
    const problem = raw[field] === undefined ? undefined : hostValueProblem(field, raw[field]);
    if (problem) fail(state, field, problem);
  }
  if (raw.api_key) leaf.apiKey = raw.api_key.replace(/^Bearer\s+/i, "").trim();
  const azure = {
    resourceName: raw.resource_name,
    deploymentId: raw.deployment_id,
    apiVersion: raw.api_version,
    modelName: raw.azure_model_name,
  };
  if (Object.values(azure).some(Boolean)) leaf.azure = azure;
  const serviceAccount = raw.vertex_service_account_json;
  const vertex = {
    projectId: raw.vertex_project_id,
    region: raw.vertex_region,
    serviceAccountJson: typeof serviceAccount === "object" ? JSON.stringify(serviceAccount) : serviceAccount,
    storageBucket: raw.vertex_storage_bucket,
  };
  if (Object.values(vertex).some(Boolean)) leaf.vertex = vertex;
  const aws = {
    accessKeyId: raw.aws_access_key_id,
    secretAccessKey: raw.aws_secret_access_key,
    sessionToken: raw.aws_session_token,
    region: raw.aws_region,
    s3Bucket: raw.aws_s3_bucket,
    roleArn: raw.aws_role_arn,
    authType: raw.aws_auth_type,
    externalId: raw.aws_external_id,
  };
  if (Object.values(aws).some(Boolean)) leaf.aws = aws;
  return leaf;
}

/** Fields that describe a target's provider: without a provider they would be ignored, so they need one. */
const LEAF_TARGET_FIELDS = [
  "api_key",
  "custom_host",
  "resource_name",
  "deployment_id",
  "api_version",
  "azure_model_name",
  "vertex_project_id",
  "vertex_region",
  "vertex_service_account_json",
  "vertex_storage_bucket",
  "aws_access_key_id",
  "aws_secret_access_key",
  "aws_session_token",
  "aws_region",
  "aws_s3_bucket",
  "aws_role_arn",
  "aws_auth_type",
  "aws_external_id",
] as const;

function inherit(raw: RawConfigNode, state: CompileState): InheritedSettings {
  const parent = state.inherited;
  const settings: InheritedSettings = { ...parent };
  if (raw.retry) {
    settings.retry = {
      attempts: raw.retry.attempts,
      onStatusCodes: raw.retry.on_status_codes ?? DEFAULT_RETRY_STATUS_CODES,
      useRetryAfterHeader: raw.retry.use_retry_after_header ?? false,
    };
  }
  if (raw.request_timeout !== undefined) settings.requestTimeoutMs = raw.request_timeout;
  if (raw.cache) settings.cache = compileCache(raw.cache, state);
  if (raw.override_params) settings.overrideParams = { ...parent.overrideParams, ...raw.override_params };
  if (raw.default_params) settings.defaultParams = { ...parent.defaultParams, ...raw.default_params };
  if (raw.drop_params) settings.dropParams = [...new Set([...(parent.dropParams ?? []), ...raw.drop_params])];
  if (raw.forward_headers)
    settings.forwardHeaders = [...new Set([...(parent.forwardHeaders ?? []), ...raw.forward_headers])];
  const guardrails = compileNodeGuardrails(raw, state.path, parent.guardrails, (suffix, message) =>
    fail(state, suffix, message),
  );
  if (guardrails) settings.guardrails = guardrails;
  if (raw.custom_host !== undefined) {
    const at = paramAt(state, "custom_host");
    try {
      settings.customHost = checkCustomHostSyntax(raw.custom_host, state.trusted, at).href.replace(/\/+$/, "");
    } catch (error) {
      throw badRequest(`Invalid value for '${at}': ${(error as Error).message}`, at, "invalid_custom_host");
    }
  }
  return settings;
}

function compileCache(raw: NonNullable<RawConfigNode["cache"]>, state: CompileState): CacheSettings {
  const cache: CacheSettings = {
    mode: raw.mode,
    maxAgeSeconds: raw.max_age,
    similarityThreshold: raw.similarity_threshold ?? CACHE_LIMITS.defaultSimilarity,
  };
  if (raw.mode !== "semantic") return cache;
  const embedding = raw.embedding;
  if (!embedding) fail(state, "cache.embedding", "semantic caching needs an embedding target: {provider, model}.");
  const model = embedding.model;
  if (typeof model !== "string" || model.trim() === "" || model.length > CONFIG_LIMITS.identifierLength)
    fail(state, "cache.embedding.model", "the embedding model must be a non-empty string.");
  const { model: _model, ...target } = embedding;
  if (Object.hasOwn(target, "cache")) fail(state, "cache.embedding.cache", "the embedding target cannot be cached.");
  // The embedding target is a config of its own (a leaf or a strategy), with every check a config gets.
  const config = compileConfig(target, state.trusted, paramAt(state, "cache.embedding"));
  cache.embedding = { config, model: model.trim() };
  return cache;
}

function compileConditions(raw: RawConfigNode, node: StrategyNode, state: CompileState): void {
  const byName = new Map<string, number>();
  raw.targets!.forEach((target, index) => {
    if (target.name === undefined) return;
    if (byName.has(target.name)) fail(state, `targets[${index}].name`, `target name '${target.name}' is used twice.`);
    byName.set(target.name, index);
  });
  const conditions = raw.strategy!.conditions;
  if (!conditions || conditions.length === 0)
    fail(state, "strategy.conditions", "a conditional strategy needs conditions: [{query, then}].");
  node.conditions = conditions.map((condition, index) => {
    const then = byName.get(condition.then);
    if (then === undefined)
      fail(state, `strategy.conditions[${index}].then`, `no target is named '${condition.then}'.`);
    return { test: compileQuery(condition.query, paramAt(state, `strategy.conditions[${index}].query`)), then };
  });
  const fallbackName = raw.strategy!.default;
  if (fallbackName !== undefined) {
    const index = byName.get(fallbackName);
    if (index === undefined) fail(state, "strategy.default", `no target is named '${fallbackName}'.`);
    node.defaultTarget = index;
  }
}

function countDescendants(node: ConfigNode): number {
  if (node.kind === "leaf") return 0;
  return node.targets.reduce((sum, target) => sum + 1 + countDescendants(target), 0);
}

function checkLimits(root: ConfigNode, param: string): void {
  if (root.kind === "leaf") return;
  const max = root.mode === "conditional" ? CONFIG_LIMITS.rootTargetsConditional : CONFIG_LIMITS.rootTargets;
  if (root.targets.length > max) {
    fail(
      { path: "config", param },
      "targets",
      `at most ${max} targets at the root of a ${root.mode} config (got ${root.targets.length}).`,
    );
  }
  for (const target of root.targets) {
    const nested = countDescendants(target);
    if (nested > CONFIG_LIMITS.nestedPerRootTarget) {
      fail(
        { path: target.path, param },
        "targets",
        `at most ${CONFIG_LIMITS.nestedPerRootTarget} nested targets per root target (got ${nested}).`,
      );
    }
  }
}

// --- camelCase aliases -------------------------------------------------------------------------------------

const camelToSnake = (key: string) => key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
/** Objects whose keys are user data (request params, queries): never renamed. */
const OPAQUE = new Set([
  "override_params",
  "default_params",
  "query",
  "cache",
  "metadata",
  "vertex_service_account_json",
  // Check ids (`default.regexMatch`) and parameters; config-guardrails.ts accepts camelCase action names itself.
  ...GUARDRAIL_CONFIG_KEYS,
]);

/** Renames camelCase config keys to snake_case (config nodes, strategy, retry, conditions), leaving params alone. */
export function snakeCaseConfig(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCaseConfig);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const snake = /[A-Z]/.test(key) && !key.startsWith("$") ? camelToSnake(key) : key;
    const name = Object.hasOwn(value, snake) && snake !== key ? key : snake;
    out[name] = OPAQUE.has(name)
      ? name === "cache" && isPlainObject(item)
        ? snakeKeys(item)
        : item
      : snakeCaseConfig(item);
  }
  return out;
}

function snakeKeys(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [/[A-Z]/.test(key) ? camelToSnake(key) : key, item]),
  );
}
