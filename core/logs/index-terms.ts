import { createHash } from "node:crypto";
import { conditionCount, type LogFacts, type LogSearch } from "./log-search.ts";

/**
 * The search index of the store families that keep it as index items beside each log (index-items.ts):
 * one entry per term a log has, sorted by time within its term. A term names a filter and its value within an
 * organisation, and within a workspace for the dimensions a workspace's console filters on (a workspace key's
 * search then walks its own workspace's entries only):
 *   organisation: every log, trace, API key, user, status, provider, model (requested and answered), metadata
 *                 key, metadata key and value;
 *   workspace:    every log, status, provider, model.
 * A search walks the entries of the most selective term it names (searchTerm); the other conditions are checked
 * on each entry's facts (index-scan.ts).
 */

type Dimension = "all" | "trace" | "key" | "user" | "status" | "provider" | "model" | "meta" | "metaValue";

/** Dimensions indexed per workspace as well as per organisation. */
const WORKSPACE_DIMENSIONS = new Set<Dimension>(["all", "status", "provider", "model"]);

/**
 * Values longer than this once encoded are named by their hash, so a term stays a short key (DynamoDB: 2048 bytes
 * of partition key); matches are checked exactly on each entry read.
 */
const MAX_PART_CHARS = 200;

function part(value: string): string {
  const encoded = encodeURIComponent(value);
  return encoded.length > MAX_PART_CHARS ? `#${createHash("sha256").update(value).digest("base64url")}` : encoded;
}

function term(organisationId: string, workspaceId: string | undefined, dimension: Dimension, value = ""): string {
  const scope = workspaceId === undefined ? "*" : part(workspaceId);
  return `${part(organisationId)}/${scope}/${dimension}=${value}`;
}

/** Every term of a log (each once). */
export function indexTerms(log: LogFacts): string[] {
  const values: Array<[Dimension, string]> = [["all", ""]];
  values.push(["trace", part(log.traceId)]);
  if (log.apiKeyId !== undefined) values.push(["key", part(log.apiKeyId)]);
  if (log.userId !== undefined) values.push(["user", part(log.userId)]);
  values.push(["status", String(log.status)]);
  if (log.provider !== undefined) values.push(["provider", part(log.provider)]);
  for (const model of new Set([log.requestedModel, log.answeredModel])) {
    if (model !== undefined) values.push(["model", part(model)]);
  }
  for (const [key, value] of Object.entries(log.metadata ?? {})) {
    values.push(["meta", part(key)], ["metaValue", `${part(key)}=${part(value)}`]);
  }
  const terms: string[] = [];
  for (const [dimension, value] of values) {
    terms.push(term(log.organisationId, undefined, dimension, value));
    if (log.workspaceId !== undefined && WORKSPACE_DIMENSIONS.has(dimension)) {
      terms.push(term(log.organisationId, log.workspaceId, dimension, value));
    }
  }
  return terms;
}

/**
 * The term a search walks: the first condition it has in this order (most selective first), in its workspace
 * when it has one and the dimension is indexed there. `exact` when that term alone decides (every entry read
 * is a match, expired ones aside).
 */
export function searchTerm(search: LogSearch): { term: string; exact: boolean } {
  const [dimension, value] = chooseDimension(search);
  const inWorkspace = search.workspaceId !== undefined && WORKSPACE_DIMENSIONS.has(dimension);
  const conditions = conditionCount(search);
  const workspaceDecided = search.workspaceId === undefined || inWorkspace;
  const exact = workspaceDecided && conditions === (dimension === "all" ? 0 : 1);
  return { term: term(search.organisationId, inWorkspace ? search.workspaceId : undefined, dimension, value), exact };
}

function chooseDimension(search: LogSearch): [Dimension, string] {
  if (search.traceId !== undefined) return ["trace", part(search.traceId)];
  if (search.apiKeyId !== undefined) return ["key", part(search.apiKeyId)];
  if (search.userId !== undefined) return ["user", part(search.userId)];
  if (search.metadataKey !== undefined && search.metadataValue !== undefined) {
    return ["metaValue", `${part(search.metadataKey)}=${part(search.metadataValue)}`];
  }
  if (search.model !== undefined) return ["model", part(search.model)];
  if (search.metadataKey !== undefined) return ["meta", part(search.metadataKey)];
  if (search.provider !== undefined) return ["provider", part(search.provider)];
  if (search.status !== undefined) return ["status", String(search.status)];
  return ["all", ""];
}
