import { badRequest } from "../../http/errors.ts";
import { isPlainObject } from "../routing/query.ts";
import {
  type CheckSpec,
  DEFAULT_CHECK_TIMEOUT_MS,
  type GuardrailActions,
  type GuardrailDefinition,
  type GuardrailFeedback,
  type GuardrailPhase,
  MAX_CHECK_TIMEOUT_MS,
} from "./types.ts";

/**
 * Guardrails written in a routing config (Portkey's config format), compiled with the rest of the config by
 * `compileConfig` (core/inference/routing/config.ts). That runs synchronously on every data-plane function's init path,
 * so this module checks structure with plain code and never loads the check library; check parameters are
 * validated by `validateConfigGuardrails`, which loads it.
 *
 * A config node may carry, for the input and the output phase:
 * - `input_guardrails` / `output_guardrails`: items are a saved guardrail's id or slug (a string), or an inline
 *   guardrail in Portkey's shorthand: every key that is not an action names a check (`"default.contains": {...}`,
 *   a name without a dot meaning `default.<name>`), its value the check's parameters (its own `id` and
 *   `is_enabled` taken out of them);
 * - the older `before_request_hooks` / `after_request_hooks`: `{type: "guardrail", id?, checks?: [{id,
 *   parameters}], ...actions}`; a hook with only an `id` references a saved guardrail.
 * A node's hooks come first, then its guardrails (as Portkey appends them); a target runs its parents' guardrails
 * and then its own.
 */

/** One guardrail of a config: a saved one by id or slug, or one written inline. `path` locates it for errors. */
export type GuardrailEntry = { ref: string; path: string } | { inline: GuardrailDefinition; path: string };

export interface ConfigGuardrails {
  input: GuardrailEntry[];
  output: GuardrailEntry[];
}

export const GUARDRAIL_CONFIG_LIMITS = {
  /** Guardrails per list (one node's `input_guardrails`, ...). */
  perList: 16,
  checksPerGuardrail: 32,
  /** Ids, slugs, names and check ids. */
  identifierLength: 128,
  feedbackMetadataLength: 512,
} as const;

/** The node keys holding guardrails, and their phase. Hooks first: that is the order they run in. */
const LISTS: ReadonlyArray<{ key: string; phase: GuardrailPhase; shape: "hooks" | "shorthand" }> = [
  { key: "before_request_hooks", phase: "input", shape: "hooks" },
  { key: "input_guardrails", phase: "input", shape: "shorthand" },
  { key: "after_request_hooks", phase: "output", shape: "hooks" },
  { key: "output_guardrails", phase: "output", shape: "shorthand" },
];

/** Config keys holding guardrails: their contents (check ids, parameters) are user data, never renamed. */
export const GUARDRAIL_CONFIG_KEYS: readonly string[] = LISTS.map((list) => list.key);

const REF = /^[\w.:@-]{1,128}$/;

/** Action keys, with the camelCase spellings Portkey's own hook objects use. */
const ACTION_ALIASES: Readonly<Record<string, string>> = {
  onFail: "on_fail",
  onSuccess: "on_success",
  onError: "on_error",
  timeoutMs: "timeout_ms",
  softDeny200: "soft_deny_200",
};
const ACTION_KEYS = new Set(["deny", "async", "on_fail", "on_success", "soft_deny_200", "on_error", "timeout_ms"]);
/**
 * Keys of a guardrail that are neither actions nor checks. `type` is Portkey's hook type (only `guardrail` is
 * supported); `sequential` is accepted for Portkey configs and changes nothing: checks that rewrite the text
 * always run one after another, in the order written (core/inference/guardrails/runner.ts).
 */
const META_KEYS = new Set(["id", "name", "type", "sequential"]);

/** Fails the config with a 400 naming `suffix` (relative to the node), e.g. `input_guardrails[0].deny`. */
export type FailAt = (suffix: string, message: string) => never;

/** Where each inline check came from, for the messages of `validateConfigGuardrails`. */
const checkSources = new WeakMap<CheckSpec, { phase: GuardrailPhase; idPath: string; parametersPath: string }>();

/**
 * The guardrails a node runs: its parent's, then its own. Undefined when neither has any. `nodePath` is the
 * node's path in the config (`config.targets[1]`); entries' paths extend it.
 */
export function compileNodeGuardrails(
  raw: Record<string, unknown>,
  nodePath: string,
  parent: ConfigGuardrails | undefined,
  fail: FailAt,
): ConfigGuardrails | undefined {
  let own: ConfigGuardrails | undefined;
  for (const { key, phase, shape } of LISTS) {
    const list = raw[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) fail(key, "must be an array of guardrails.");
    if (list.length > GUARDRAIL_CONFIG_LIMITS.perList)
      fail(key, `at most ${GUARDRAIL_CONFIG_LIMITS.perList} guardrails (got ${list.length}).`);
    own ??= { input: [], output: [] };
    list.forEach((item, index) => {
      const suffix = `${key}[${index}]`;
      const at: Located = { path: `${nodePath}.${suffix}`, suffix, phase, fail };
      own![phase].push(shape === "hooks" ? hookEntry(item, at) : shorthandEntry(item, at));
    });
  }
  if (!own) return parent;
  if (!parent) return own;
  return { input: [...parent.input, ...own.input], output: [...parent.output, ...own.output] };
}

/**
 * What the walks below read of a compiled config node (core/inference/routing/config.ts ConfigNode, which
 * compiles its guardrails with this module): its guardrails and, for a strategy, its targets.
 */
interface GuardedNode {
  readonly kind: string;
  readonly settings: { readonly guardrails?: ConfigGuardrails };
  readonly targets?: readonly GuardedNode[];
}

/** Whether any node of a compiled config carries guardrails. */
export function configHasGuardrails(node: GuardedNode): boolean {
  const guardrails = node.settings.guardrails;
  if (guardrails && (guardrails.input.length > 0 || guardrails.output.length > 0)) return true;
  return node.kind === "strategy" && node.targets!.some(configHasGuardrails);
}

/**
 * Validates the parameters of every inline check of a compiled config (the check library is loaded for it):
 * an unknown check, parameters its schema refuses, a check that does not apply to its phase answer 400
 * naming the place (`param` stands for the config root, e.g. `config` or `x-gateway-config`). Valid
 * parameters are replaced by their parsed form (defaults filled in).
 */
export async function validateConfigGuardrails(root: GuardedNode, param: string): Promise<void> {
  const specs = new Set<CheckSpec>();
  const collect = (node: GuardedNode) => {
    const guardrails = node.settings.guardrails;
    for (const entry of [...(guardrails?.input ?? []), ...(guardrails?.output ?? [])])
      if ("inline" in entry) for (const spec of entry.inline.checks) specs.add(spec);
    if (node.kind === "strategy") node.targets!.forEach(collect);
  };
  collect(root);
  if (specs.size === 0) return;
  const { checkSpecProblem } = await import("./checks/registry.ts");
  const named = (path: string) => param + path.slice("config".length);
  for (const spec of specs) {
    const source = checkSources.get(spec)!;
    const problem = await checkSpecProblem(spec, source.phase);
    if (problem) {
      const at =
        problem.path === "id" ? source.idPath : source.parametersPath + problem.path.slice("parameters".length);
      throw badRequest(`Invalid value for '${named(at)}': ${problem.message}`, named(at), "invalid_config");
    }
  }
}

// --- entries -------------------------------------------------------------------------------------------------

interface Located {
  /** From the config root: `config.targets[1].input_guardrails[0]`. */
  path: string;
  /** From the node, for `fail`: `input_guardrails[0]`. */
  suffix: string;
  phase: GuardrailPhase;
  fail: FailAt;
}

/** Fails at a place inside the entry: `segments` are keys and array indices below it. */
const failAt = (at: Located, segments: Segment[], message: string): never =>
  at.fail(at.suffix + pathOf(segments), message);

type Segment = string | number;

/** `.deny`, `[2]`, or `["default.contains"]` for keys that are not plain names. */
const pathOf = (segments: Segment[]) =>
  segments
    .map((segment) =>
      typeof segment === "number"
        ? `[${segment}]`
        : /^[A-Za-z_$][\w$]*$/.test(segment)
          ? `.${segment}`
          : `[${JSON.stringify(segment)}]`,
    )
    .join("");

function reference(value: unknown, at: Located, segments: Segment[]): string {
  if (typeof value !== "string" || !REF.test(value.trim()))
    failAt(at, segments, "a saved guardrail is named by its id or slug (letters, digits, . _ : @ -; at most 128).");
  return (value as string).trim();
}

/** An item of `input_guardrails` / `output_guardrails`. */
function shorthandEntry(item: unknown, at: Located): GuardrailEntry {
  if (typeof item === "string") return { ref: reference(item, at, []), path: at.path };
  if (!isPlainObject(item))
    failAt(at, [], "a guardrail is a saved guardrail's id or slug, or an object of checks and actions.");
  const raw = item as Record<string, unknown>;
  const actions: Record<string, unknown> = {};
  const checks: CheckSpec[] = [];
  for (const [key, value] of Object.entries(raw)) {
    const name = ACTION_ALIASES[key] ?? key;
    if (ACTION_KEYS.has(name)) actions[name] = value;
    else if (!META_KEYS.has(key)) checks.push(shorthandCheck(key, value, at));
  }
  if (checks.length === 0) return referenceOnly(raw, actions, at);
  return { inline: inlineDefinition(raw, actions, checks, at), path: at.path };
}

/** `"default.contains": {words: [...], is_enabled?: false, id?: "..."}` */
function shorthandCheck(key: string, value: unknown, at: Located): CheckSpec {
  if (key.length > GUARDRAIL_CONFIG_LIMITS.identifierLength)
    failAt(at, [key], `a check id has at most ${GUARDRAIL_CONFIG_LIMITS.identifierLength} characters.`);
  if (!isPlainObject(value)) failAt(at, [key], `the parameters of check '${key}' must be an object.`);
  const { id, is_enabled, ...parameters } = value as Record<string, unknown>;
  if (id !== undefined && (typeof id !== "string" || id.trim() === ""))
    failAt(at, [key, "id"], "a check id must be a non-empty string.");
  if (is_enabled !== undefined && typeof is_enabled !== "boolean")
    failAt(at, [key, "is_enabled"], "must be true or false.");
  const path = `${at.path}${pathOf([key])}`;
  return checkSpec((id as string | undefined) ?? key, parameters, is_enabled as boolean | undefined, at.phase, {
    idPath: path,
    parametersPath: path,
  });
}

/** An item of `before_request_hooks` / `after_request_hooks`. */
function hookEntry(item: unknown, at: Located): GuardrailEntry {
  if (!isPlainObject(item)) failAt(at, [], 'a hook is an object: {"type": "guardrail", "checks": [...]}.');
  const raw = item as Record<string, unknown>;
  const actions: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const name = ACTION_ALIASES[key] ?? key;
    if (ACTION_KEYS.has(name)) actions[name] = value;
    else if (!META_KEYS.has(key) && key !== "checks")
      failAt(at, [key], "unknown hook field (expected type, id, name, checks and actions).");
  }
  if (raw.checks === undefined) return referenceOnly(raw, actions, at);
  if (!Array.isArray(raw.checks) || raw.checks.length === 0)
    failAt(at, ["checks"], "must be a non-empty array of {id, parameters}.");
  const checks = (raw.checks as unknown[]).map((check, index) => hookCheck(check, at, index));
  return { inline: inlineDefinition(raw, actions, checks, at), path: at.path };
}

/** `{id: "default.contains", parameters: {...}, is_enabled?, name?}` */
function hookCheck(check: unknown, at: Located, index: number): CheckSpec {
  const key: Segment[] = ["checks", index];
  if (!isPlainObject(check)) failAt(at, key, "a check is an object {id, parameters}.");
  const { id, parameters, is_enabled, name, ...rest } = check as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) failAt(at, [...key, unknown], "unknown check field (expected id, parameters, name).");
  if (typeof id !== "string" || id.trim() === "" || id.length > GUARDRAIL_CONFIG_LIMITS.identifierLength)
    failAt(at, [...key, "id"], "a check needs its id (e.g. default.regexMatch).");
  if (parameters !== undefined && !isPlainObject(parameters)) failAt(at, [...key, "parameters"], "must be an object.");
  if (is_enabled !== undefined && typeof is_enabled !== "boolean")
    failAt(at, [...key, "is_enabled"], "must be true or false.");
  if (name !== undefined && !isIdentifier(name))
    failAt(at, [...key, "name"], "must be a string of 1 to 128 characters.");
  const spec = checkSpec(
    id as string,
    { ...(parameters as Record<string, unknown> | undefined) },
    is_enabled as boolean | undefined,
    at.phase,
    { idPath: `${at.path}${pathOf([...key, "id"])}`, parametersPath: `${at.path}${pathOf([...key, "parameters"])}` },
  );
  if (name !== undefined) spec.name = name as string;
  return spec;
}

function checkSpec(
  id: string,
  parameters: Record<string, unknown>,
  isEnabled: boolean | undefined,
  phase: GuardrailPhase,
  paths: { idPath: string; parametersPath: string },
): CheckSpec {
  const trimmed = id.trim();
  // Portkey's rule: a check named without a namespace is one of the built-in (`default.`) checks.
  const spec: CheckSpec = { id: trimmed.includes(".") ? trimmed : `default.${trimmed}`, parameters };
  if (isEnabled !== undefined) spec.is_enabled = isEnabled;
  checkSources.set(spec, { phase, ...paths });
  return spec;
}

/** An entry without checks: the id of a saved guardrail, whose actions are saved with it. */
function referenceOnly(raw: Record<string, unknown>, actions: Record<string, unknown>, at: Located): GuardrailEntry {
  if (raw.id === undefined) failAt(at, [], "an inline guardrail needs at least one check.");
  const extra = Object.keys(actions)[0] ?? (raw.name !== undefined ? "name" : undefined);
  if (extra !== undefined)
    failAt(
      at,
      [extra],
      "a reference to a saved guardrail carries only its id (its checks and actions are saved with it).",
    );
  checkType(raw, at);
  return { ref: reference(raw.id, at, ["id"]), path: at.path };
}

function inlineDefinition(
  raw: Record<string, unknown>,
  actions: Record<string, unknown>,
  checks: CheckSpec[],
  at: Located,
): GuardrailDefinition {
  checkType(raw, at);
  if (checks.length > GUARDRAIL_CONFIG_LIMITS.checksPerGuardrail)
    failAt(
      at,
      [],
      `at most ${GUARDRAIL_CONFIG_LIMITS.checksPerGuardrail} checks per guardrail (got ${checks.length}).`,
    );
  if (raw.id !== undefined && !isIdentifier(raw.id)) failAt(at, ["id"], "must be a string of 1 to 128 characters.");
  if (raw.name !== undefined && !isIdentifier(raw.name))
    failAt(at, ["name"], "must be a string of 1 to 128 characters.");
  if (raw.sequential !== undefined && typeof raw.sequential !== "boolean")
    failAt(at, ["sequential"], "must be true or false.");
  const definition: GuardrailDefinition = {
    // Stable across requests and processes: verdicts in logs name the same inline guardrail alike.
    id: (raw.id as string | undefined)?.trim() ?? `inline:${at.path}`,
    checks,
    actions: compileActions(actions, at),
  };
  if (raw.name !== undefined) definition.name = (raw.name as string).trim();
  return definition;
}

function checkType(raw: Record<string, unknown>, at: Located): void {
  if (raw.type !== undefined && raw.type !== "guardrail")
    failAt(at, ["type"], "only guardrail hooks are supported (type: guardrail).");
}

const isIdentifier = (value: unknown): value is string =>
  typeof value === "string" && value.trim().length > 0 && value.length <= GUARDRAIL_CONFIG_LIMITS.identifierLength;

// --- actions -------------------------------------------------------------------------------------------------

/** The written actions with their defaults: deny, async and soft_deny_200 false, on_error open, the default timeout. */
function compileActions(raw: Record<string, unknown>, at: Located): GuardrailActions {
  const flag = (key: string): boolean => {
    const value = raw[key];
    if (value !== undefined && typeof value !== "boolean") failAt(at, [key], "must be true or false.");
    return value === true;
  };
  const actions: GuardrailActions = {
    deny: flag("deny"),
    async: flag("async"),
    soft_deny_200: flag("soft_deny_200"),
    on_error: "open",
    timeout_ms: DEFAULT_CHECK_TIMEOUT_MS,
  };
  // As for saved guardrails (core/control/guardrails/service.ts): an async guardrail only records its verdict.
  const blocking = actions.deny ? "deny" : actions.soft_deny_200 ? "soft_deny_200" : undefined;
  if (actions.async && blocking)
    failAt(
      at,
      ["async"],
      `an async guardrail only records its verdict and cannot block, so it cannot have '${blocking}'.`,
    );
  if (raw.on_error !== undefined) {
    if (raw.on_error !== "open" && raw.on_error !== "closed") failAt(at, ["on_error"], "must be 'open' or 'closed'.");
    actions.on_error = raw.on_error as "open" | "closed";
  }
  if (raw.timeout_ms !== undefined) {
    const value = raw.timeout_ms;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1 || value > MAX_CHECK_TIMEOUT_MS)
      failAt(at, ["timeout_ms"], `must be an integer from 1 to ${MAX_CHECK_TIMEOUT_MS} (ms).`);
    actions.timeout_ms = value as number;
  }
  for (const key of ["on_success", "on_fail"] as const) {
    const value = raw[key];
    if (value === undefined) continue;
    if (!isPlainObject(value)) failAt(at, [key], "must be an object: {feedback?: {value, weight, metadata}}.");
    const { feedback, ...rest } = value as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined) failAt(at, [key, unknown], "unknown field (expected feedback).");
    actions[key] = feedback === undefined ? {} : { feedback: compileFeedback(feedback, at, [key, "feedback"]) };
  }
  return actions;
}

/** Feedback as the feedback API takes it (core/observe/feedback): value an integer -10..10, weight 0..1 (default 1). */
function compileFeedback(raw: unknown, at: Located, key: Segment[]): GuardrailFeedback {
  if (!isPlainObject(raw)) failAt(at, key, "must be an object {value, weight?, metadata?}.");
  const { value, weight = 1, metadata, ...rest } = raw as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) failAt(at, [...key, unknown], "unknown field (expected value, weight, metadata).");
  if (typeof value !== "number" || !Number.isInteger(value) || value < -10 || value > 10)
    failAt(at, [...key, "value"], "must be an integer from -10 to 10.");
  if (typeof weight !== "number" || !(weight >= 0 && weight <= 1))
    failAt(at, [...key, "weight"], "must be a number from 0 to 1.");
  if (
    metadata !== undefined &&
    (typeof metadata !== "string" || metadata.length > GUARDRAIL_CONFIG_LIMITS.feedbackMetadataLength)
  )
    failAt(at, [...key, "metadata"], `must be a string of at most ${GUARDRAIL_CONFIG_LIMITS.feedbackMetadataLength}.`);
  const feedback: GuardrailFeedback = { value: value as number, weight: weight as number };
  if (metadata !== undefined) feedback.metadata = metadata as string;
  return feedback;
}
