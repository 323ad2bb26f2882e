import type { Principal } from "../auth/principal.ts";
import type { PromptVersionContent } from "../control/prompt-records.ts";
import { badRequest } from "../http/errors.ts";
import type { Records } from "../store/ports.ts";
import { type LoadedPartial, loadPartials } from "./partials.ts";
import type { PromptRequest } from "./request.ts";
import {
  type MustacheToken,
  type Template,
  collectNeeds,
  emptyNeeds,
  mapTemplateTexts,
  mustacheTokens,
  parseTemplate,
  renderMustache,
  templateTexts,
} from "./template.ts";

/**
 * Fills a prompt version with a request's variables: the request body it stands for, a chat completion body
 * (`messages`) or a text completion body (`prompt`), with the version's model, hyperparameters and tools, and the
 * request's hyperparameters over them. Every variable the template prints (in its partials too) must be given:
 * a missing one answers 400 naming it. The rendered size is bounded before anything is rendered.
 */

export interface RenderedPrompt {
  kind: "chat" | "text";
  body: Record<string, unknown>;
}

/** Fields of a version that go into the request as they are. */
const VERSION_FIELDS = ["functions", "tools", "tool_choice", "response_format"] as const;

export async function renderPrompt(
  records: Records,
  principal: Principal,
  version: PromptVersionContent,
  request: PromptRequest,
  /** The most characters the rendered template may hold. */
  maxChars: number,
): Promise<RenderedPrompt> {
  const template = parseTemplate(version.string);
  const needs = emptyNeeds();
  const textTokens = templateTexts(template).map((text) => collectTokens(text, needs));
  const partials = await loadPartials(records, principal, needs);

  const missing = [...needs.variables].filter((name) => !Object.hasOwn(request.variables, name));
  if (missing.length > 0) {
    const names = missing.map((name) => `'${name}'`).join(", ");
    throw badRequest(
      `Missing variable${missing.length > 1 ? "s" : ""} ${names}: the prompt's template uses ${missing.length > 1 ? "them" : "it"}; send ${missing.length > 1 ? "them" : "it"} in 'variables'.`,
      `variables.${missing[0]}`,
      "missing_variable",
    );
  }
  const size = new RenderedSize(request.variables, partials);
  const chars = textTokens.reduce((sum, tokens) => sum + size.of(tokens), 0);
  if (chars > maxChars) {
    throw badRequest(
      `The rendered prompt would hold about ${chars} characters, more than the ${maxChars} allowed.`,
      "variables",
      "prompt_too_large",
    );
  }

  // Names resolve among the variables' own keys only (template.ts): `{{constructor}}` or `{{v.length}}` finds a
  // variable of that name or nothing.
  const view: Record<string, string> = Object.assign(Object.create(null), request.variables);
  const partialTexts: Record<string, string> = Object.create(null);
  for (const [slug, partial] of partials) partialTexts[slug] = partial.text;
  const rendered = mapTemplateTexts(template, (text) => renderMustache(text, view, partialTexts));
  return { kind: rendered.kind, body: requestBody(version, rendered, request.overrides) };
}

function collectTokens(text: string, needs: ReturnType<typeof emptyNeeds>): MustacheToken[] {
  const tokens = mustacheTokens(text, "the prompt");
  collectNeeds(tokens, needs);
  return tokens;
}

/** The version's settings, the request's hyperparameters over them, and the rendered messages or prompt. */
function requestBody(
  version: PromptVersionContent,
  rendered: Template,
  overrides: Record<string, unknown>,
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...version.parameters };
  if (version.model !== undefined) body.model = version.model;
  for (const field of VERSION_FIELDS) if (version[field] !== undefined) body[field] = version[field];
  Object.assign(body, overrides);
  // One token limit, under the name the route takes: chat's max_completion_tokens (max_tokens is deprecated
  // there), text completions' max_tokens. The request's wins over the template's, whichever name either used.
  const limit =
    overrides.max_completion_tokens ??
    overrides.max_tokens ??
    version.parameters.max_completion_tokens ??
    version.parameters.max_tokens;
  delete body.max_tokens;
  delete body.max_completion_tokens;
  if (rendered.kind === "chat") {
    if (limit !== undefined) body.max_completion_tokens = limit;
    body.messages = rendered.messages;
  } else {
    if (limit !== undefined) body.max_tokens = limit;
    body.prompt = rendered.text;
  }
  return body;
}

/**
 * An upper bound of a rendered text's length, from its tokens: literal text, variables' values, sections (a
 * string renders a section at most once) and partials (memoised; a standalone partial's indentation may repeat
 * on each of its lines). Partials are acyclic and bounded in depth (partials.ts), so this ends.
 */
class RenderedSize {
  private readonly partialSizes = new Map<string, number>();
  private readonly variables: Record<string, string>;
  private readonly partials: Map<string, LoadedPartial>;

  constructor(variables: Record<string, string>, partials: Map<string, LoadedPartial>) {
    this.variables = variables;
    this.partials = partials;
  }

  of(tokens: MustacheToken[]): number {
    let total = 0;
    for (const token of tokens) {
      const [type, value, , , children] = token;
      if (type === "text") total += value.length;
      else if (type === "name" || type === "&") total += this.variable(value);
      else if ((type === "#" || type === "^") && Array.isArray(children)) total += this.of(children);
      else if (type === ">") {
        const indentation: unknown = token[4];
        const indent = typeof indentation === "string" ? indentation.length : 0;
        total += this.partial(value) * (1 + indent);
      }
    }
    return total;
  }

  /** `{{.}}` prints the section's string: at most the longest variable. */
  private variable(name: string): number {
    if (name === ".") return Math.max(0, ...Object.values(this.variables).map((value) => value.length));
    return Object.hasOwn(this.variables, name) ? this.variables[name]!.length : 0;
  }

  private partial(slug: string): number {
    let size = this.partialSizes.get(slug);
    if (size === undefined) {
      const partial = this.partials.get(slug);
      size = partial ? this.of(partial.tokens) : 0;
      this.partialSizes.set(slug, size);
    }
    return size;
  }
}
