import { sha256Hex } from "../ids.ts";
import type { ProviderTarget } from "../providers/types.ts";

/**
 * Cache keys. A key is the SHA-256 of the tenant (organisation, workspace), the namespace, the target that
 * answers and the request body in a canonical form, so that:
 * - one workspace (or organisation) can never compute another's key: the tenant is inside the hash;
 * - an answer is reused only for the same resolved target: provider, custom host or cloud deployment, saved
 *   integration, provider account (a hash of the credential's identity, never the credential) and the headers
 *   forwarded to the provider. Two integrations of one workspace with different keys, or one reached through
 *   another custom host, never share entries;
 * - field order and explicit defaults (`temperature: 1`, `n: 1`, `stream: false`...) do not split keys;
 * - fields that change how an answer is delivered, not what it says (`stream`, `stream_options`), or that only
 *   label the request (`user`, `metadata`, `store`), do not split keys: a JSON request may be served from a
 *   streamed answer and the other way round;
 * - gateway metadata and headers are never part of it.
 */

/** Who may read an entry: everything an entry's key is scoped by besides the request itself. */
export interface CacheScope {
  organisationId: string;
  workspaceId?: string;
  namespace?: string;
}

/** The scope of an authenticated request's entries: its organisation, its workspace and its cache namespace. */
export function cacheScopeOf(
  principal: { organisationId: string; workspaceId?: string },
  namespace?: string,
): CacheScope {
  return { organisationId: principal.organisationId, workspaceId: principal.workspaceId, namespace };
}

/** Body fields that never change what the model answers. */
const IGNORED_FIELDS = new Set(["stream", "stream_options", "user", "metadata", "store"]);

/** Values equal to OpenAI's defaults: sent or not, the answer is the same. */
const DEFAULTS: Record<string, unknown> = {
  temperature: 1,
  top_p: 1,
  n: 1,
  presence_penalty: 0,
  frequency_penalty: 0,
  logprobs: false,
  echo: false,
  best_of: 1,
  parallel_tool_calls: true,
  encoding_format: "float",
};

/**
 * The part of the key that names the target answering: provider, where it is reached, which saved integration
 * and provider account, and what else is sent with the request (forwarded headers). Computed once per attempt
 * and shared by the exact and semantic lookups and the write.
 */
export function targetIdentity(target: ProviderTarget): unknown[] {
  const { azure, vertex, aws, forwardHeaders } = target;
  return [
    target.provider,
    target.customHost ?? null,
    azure ? [azure.resourceName, azure.deploymentId, azure.apiVersion, azure.modelName] : null,
    vertex ? [vertex.projectId, vertex.region] : null,
    aws?.region ?? null,
    target.integrationId ?? null,
    credentialIdentity(target),
    forwardHeaders ? sortedEntries(forwardHeaders) : null,
  ];
}

/**
 * Which provider account answers, as a hash: the API key, the AWS access key id or role (not the secret key nor
 * a session token, which rotate while the account stays), the Vertex service account. Null without any.
 */
function credentialIdentity(target: ProviderTarget): string | null {
  const { apiKey, aws, vertex } = target;
  const account = aws ? [aws.accessKeyId, aws.roleArn, aws.externalId] : null;
  if (apiKey === undefined && account === null && vertex?.serviceAccountJson === undefined) return null;
  return sha256Hex(JSON.stringify(["credential-v1", apiKey ?? null, account, vertex?.serviceAccountJson ?? null]));
}

/** A header map as sorted [name, value] pairs (names lower-cased): the order headers were given in does not count. */
export function sortedEntries(headers: Record<string, string>): Array<[string, string]> {
  return Object.entries(headers)
    .map(([name, value]): [string, string] => [name.toLowerCase(), value])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The canonical JSON of a request body: keys sorted, ignored fields and explicit defaults left out. */
export function canonicalBody(body: Record<string, unknown>): string {
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(body).sort()) {
    const value = body[key];
    if (value === undefined || value === null || IGNORED_FIELDS.has(key)) continue;
    if (Object.hasOwn(DEFAULTS, key) && DEFAULTS[key] === value) continue;
    kept[key] = value;
  }
  return canonicalJson(kept);
}

/** JSON with object keys sorted at every level (arrays keep their order: it means something). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(item).sort()) sorted[key] = (item as Record<string, unknown>)[key];
    return sorted;
  });
}

/** The key of one request: a hash over scope, family, target and the canonical request. */
export function cacheKey(scope: CacheScope, family: string, target: unknown[], request: string): string {
  return sha256Hex(
    JSON.stringify([
      "v2",
      scope.organisationId,
      scope.workspaceId ?? null,
      scope.namespace ?? null,
      family,
      target,
      request,
    ]),
  );
}
