import { badRequest } from "../../http/errors.ts";

/**
 * Spec 5.2: per-request session tags for one cloud provider (Bedrock). `x-gateway-aws-session-tags` is a JSON
 * object of tag name -> value; they become STS session tags when the gateway assumes the target's role
 * (core/providers/bedrock/assume-role.ts). Limits as STS documents them for AssumeRole `Tags`: at most 50
 * tags, keys 1-128 and values 0-256 characters of letters, digits, spaces and `_ . : / = + - @`.
 */
export const SESSION_TAG_NAME = "aws-session-tags";
export const SESSION_TAGS_HEADER = `x-gateway-${SESSION_TAG_NAME}`;
const TAG_CHARACTERS = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;
const MAX_TAGS = 50;

export function parseSessionTags(value: string | undefined): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  const invalid = (why: string) =>
    badRequest(`Invalid ${SESSION_TAGS_HEADER}: ${why}`, SESSION_TAGS_HEADER, "invalid_header");
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalid('expected a JSON object such as {"team":"search"}.');
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw invalid("expected a JSON object.");
  const entries = Object.entries(parsed);
  if (entries.length > MAX_TAGS) throw invalid(`at most ${MAX_TAGS} tags.`);
  const tags: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [key, tagValue] of entries) {
    if (typeof tagValue !== "string") throw invalid(`the value of '${key}' must be a string.`);
    if (key.length < 1 || key.length > 128 || !TAG_CHARACTERS.test(key)) throw invalid(`invalid tag key '${key}'.`);
    if (tagValue.length > 256 || !TAG_CHARACTERS.test(tagValue)) throw invalid(`invalid value for tag '${key}'.`);
    // STS compares tag keys case-insensitively: two that differ only in case would be refused there.
    if (seen.has(key.toLowerCase())) throw invalid(`tag '${key}' appears twice (keys are case-insensitive).`);
    seen.add(key.toLowerCase());
    tags[key] = tagValue;
  }
  return entries.length > 0 ? tags : undefined;
}
