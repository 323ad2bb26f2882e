import type { CheckDefinition, CheckSpec, GuardrailPhase } from "../types.ts";

/**
 * Every built-in check by id (and by its aliases, Portkey's plugin names). The data-plane functions import this
 * registry, so it holds only ids and how to import each check's module: a check (its zod schema, its library:
 * ajv, jose, franc, re2js...) is imported by the first guardrail that uses it, never at cold start.
 */
interface CheckEntry {
  id: string;
  aliases?: readonly string[];
  module(): Promise<CheckDefinition>;
}

const ENTRIES: readonly CheckEntry[] = [
  {
    id: "default.blockedModels",
    module: async () => (await import("./blocked-models.ts")).blockedModels,
  },
  {
    id: "default.characterCount",
    module: async () => (await import("./character-count.ts")).characterCount,
  },
  { id: "default.contains", module: async () => (await import("./contains.ts")).contains },
  { id: "default.containsCode", module: async () => (await import("./contains-code.ts")).containsCode },
  { id: "default.jsonKeys", module: async () => (await import("./json-keys.ts")).jsonKeys },
  { id: "default.jsonSchema", module: async () => (await import("./json-schema.ts")).jsonSchema },
  { id: "default.jwt", module: async () => (await import("./jwt.ts")).jwt },
  {
    id: "default.modelGraded",
    module: async () => (await import("./model-graded.ts")).modelGraded,
  },
  {
    id: "default.moderation",
    aliases: ["portkey.moderateContent"],
    module: async () => (await import("./moderation.ts")).moderation,
  },
  { id: "default.pii", aliases: ["portkey.pii"], module: async () => (await import("./pii.ts")).pii },
  {
    id: "default.language",
    aliases: ["portkey.language"],
    module: async () => (await import("./language.ts")).language,
  },
  {
    id: "default.modelWhitelist",
    aliases: ["default.allowedModels", "default.modelwhitelist"],
    module: async () => (await import("./model-whitelist.ts")).modelWhitelist,
  },
  { id: "default.regexMatch", module: async () => (await import("./regex-match.ts")).regexMatch },
  {
    id: "default.requiredMetadataKeys",
    module: async () => (await import("./required-metadata-keys.ts")).requiredMetadataKeys,
  },
  { id: "default.sentenceCount", module: async () => (await import("./sentence-count.ts")).sentenceCount },
  { id: "default.validUrls", module: async () => (await import("./valid-urls.ts")).validUrls },
  { id: "default.wordCount", module: async () => (await import("./word-count.ts")).wordCount },
  { id: "default.webhook", module: async () => (await import("./webhook.ts")).webhook },
];

const byId = new Map<string, CheckEntry>();
for (const entry of ENTRIES) {
  for (const id of [entry.id, ...(entry.aliases ?? [])]) {
    if (byId.has(id)) throw new Error(`guardrail check id '${id}' is registered twice`);
    byId.set(id, entry);
  }
}

/** A check's own id for an id or alias (undefined: no such check). Synchronous: nothing is imported. */
export const canonicalCheckId = (id: string): string | undefined => byId.get(id)?.id;

/** Every id the registry answers to: own ids and aliases. */
export const checkIds = (): string[] => [...byId.keys()];

const loaded = new Map<string, Promise<CheckDefinition>>();

/**
 * The check for an id or alias, its module imported and its `load()` done: ready for `problem` and `run`.
 * An import that fails is not remembered, so the next call tries again.
 */
export function findCheck(id: string): Promise<CheckDefinition | undefined> {
  const entry = byId.get(id);
  if (!entry) return Promise.resolve(undefined);
  let check = loaded.get(entry.id);
  if (!check) {
    check = entry.module().then(async (definition) => {
      await definition.load?.();
      return definition;
    });
    loaded.set(entry.id, check);
    check.catch(() => loaded.delete(entry.id));
  }
  return check;
}

/** Every check, each imported (for the docs, the OpenAPI description and the control plane's listing). */
export const allChecks = (): Promise<CheckDefinition[]> =>
  Promise.all(ENTRIES.map((entry) => findCheck(entry.id) as Promise<CheckDefinition>));

/**
 * What is wrong with one check of a guardrail (undefined: nothing): unknown id, parameters its schema or its
 * own `problem` refuses, or, when `phase` is given, a phase the check does not run in. `path` names the place
 * for the caller's 400 (e.g. `parameters.rule`). On success the parameters are replaced by their parsed form
 * (defaults filled in, Portkey's parameter names mapped to ours).
 */
export async function checkSpecProblem(
  spec: CheckSpec,
  phase?: GuardrailPhase,
): Promise<{ path: string; message: string } | undefined> {
  const check = await findCheck(spec.id);
  if (!check) return { path: "id", message: `unknown check '${spec.id}'` };
  if (phase && check.phases && !check.phases.includes(phase)) {
    return { path: "id", message: `${check.id} runs only on ${check.phases.join(" and ")}, not on ${phase}` };
  }
  const parsed = check.parameters.safeParse(spec.parameters ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = ["parameters", ...issue.path.map(String)].join(".");
    return { path, message: issue.message };
  }
  const problem = check.problem?.(parsed.data);
  if (problem) return { path: "parameters", message: problem };
  spec.parameters = parsed.data as Record<string, unknown>;
  return undefined;
}
