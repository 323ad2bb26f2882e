import Mustache from "mustache";
import { badRequest } from "../http/errors.ts";

/**
 * A saved prompt's template (a version's `string`), parsed: Portkey's chat form is a JSON array of
 * `{role, content}` messages written as text, with mustache inside the contents; anything else is a text prompt.
 * Mustache runs only inside the message contents, never over the JSON text, so a variable holding quotes or
 * brackets cannot change the messages' structure.
 */

// Mustache keeps every template it parsed in a process-wide map, without bound: user templates would pile up in
// a long-lived process. Parsing a prompt again costs microseconds.
Mustache.templateCache = undefined;

export type Template = { kind: "text"; text: string } | { kind: "chat"; messages: Array<Record<string, unknown>> };

/** What a template's mustache asks for: the variables it prints and the partials it includes. */
export interface TemplateNeeds {
  /** `{{name}}` / `{{{name}}}` / `{{& name}}`, anywhere (inside sections too): each must be given. */
  variables: Set<string>;
  /** `{{#name}}` / `{{^name}}`: conditions; a missing one is simply false. */
  sections: Set<string>;
  /** `{{> slug}}`: partials to load. */
  partials: Set<string>;
}

/** A mustache token as Mustache.parse returns it: [type, value, start, end, children?]. */
export type MustacheToken = [string, string, number, number, MustacheToken[]?, ...unknown[]];

export function parseTemplate(source: string): Template {
  const trimmed = source.trim();
  if (trimmed.startsWith("[")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      parsed = undefined;
    }
    if (Array.isArray(parsed) && parsed.length > 0 && parsed.every(isMessage)) {
      return { kind: "chat", messages: parsed as Array<Record<string, unknown>> };
    }
  }
  return { kind: "text", text: source };
}

function isMessage(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const message = value as Record<string, unknown>;
  return typeof message.role === "string" && (message.content === undefined || isContent(message.content));
}

function isContent(content: unknown): boolean {
  return typeof content === "string" || Array.isArray(content) || content === null;
}

/**
 * Every mustache text of a template, in order: the text prompt, or each message's content (a string, or the
 * `text` of each text part).
 */
export function templateTexts(template: Template): string[] {
  if (template.kind === "text") return [template.text];
  const texts: string[] = [];
  for (const message of template.messages) {
    const content = message.content;
    if (typeof content === "string") texts.push(content);
    else if (Array.isArray(content)) for (const part of content) if (isTextPart(part)) texts.push(part.text);
  }
  return texts;
}

/** The template with each mustache text replaced by `fill(text)`, other fields as they were. */
export function mapTemplateTexts(template: Template, fill: (text: string) => string): Template {
  if (template.kind === "text") return { kind: "text", text: fill(template.text) };
  return {
    kind: "chat",
    messages: template.messages.map((message) => {
      const content = message.content;
      if (typeof content === "string") return { ...message, content: fill(content) };
      if (!Array.isArray(content)) return { ...message };
      return {
        ...message,
        content: content.map((part) => (isTextPart(part) ? { ...part, text: fill(part.text) } : part)),
      };
    }),
  };
}

function isTextPart(part: unknown): part is { type: "text"; text: string } {
  const candidate = part as { type?: unknown; text?: unknown } | null;
  return (
    typeof candidate === "object" &&
    candidate !== null &&
    candidate.type === "text" &&
    typeof candidate.text === "string"
  );
}

/** Parses one mustache text; a syntax error answers 400 naming `where` (the prompt or partial). */
export function mustacheTokens(text: string, where: string): MustacheToken[] {
  try {
    return Mustache.parse(text) as unknown as MustacheToken[];
  } catch (error) {
    throw badRequest(
      `The template of ${where} is not valid mustache: ${(error as Error).message}`,
      "template",
      "invalid_template",
    );
  }
}

/** Adds what `tokens` (and their nested sections) ask for to `needs`. */
export function collectNeeds(tokens: MustacheToken[], needs: TemplateNeeds): TemplateNeeds {
  for (const token of tokens) {
    const [type, value, , , children] = token;
    if ((type === "name" || type === "&") && value !== ".") needs.variables.add(value);
    else if (type === "#" || type === "^") needs.sections.add(value);
    else if (type === ">") needs.partials.add(value);
    if (children) collectNeeds(children, needs);
  }
  return needs;
}

export const emptyNeeds = (): TemplateNeeds => ({ variables: new Set(), sections: new Set(), partials: new Set() });

/**
 * The names a prompt template may read: the request's variables and nothing else. Mustache's own Context walks
 * dotted names through whatever it finds (`{{v.length}}` prints the length of the string `v`,
 * `{{v.constructor}}` its String constructor) and climbs prototypes; this one resolves a name, dots included,
 * only as one of the given variables' own keys (`{{a.b}}` is the variable named `a.b`, as the missing-variable
 * check reads it). Inside a section `{{.}}` is the section's value, the variable that opened it.
 */
class VariablesContext extends Mustache.Context {
  readonly #variables: Readonly<Record<string, string>>;

  constructor(variables: Readonly<Record<string, string>>, view?: string, parent?: VariablesContext) {
    super(view, parent);
    this.#variables = variables;
  }

  override push(view: unknown): VariablesContext {
    return new VariablesContext(this.#variables, typeof view === "string" ? view : undefined, this);
  }

  override lookup(name: string): string | undefined {
    if (name === ".") return this.view as string | undefined;
    return Object.hasOwn(this.#variables, name) ? this.#variables[name] : undefined;
  }
}

/**
 * Renders one mustache text with string variables and already-loaded partials. No HTML escaping: prompts are
 * not HTML, and `&` or `<` must reach the model as they were written.
 */
export function renderMustache(
  text: string,
  variables: Record<string, string>,
  partials: Record<string, string>,
): string {
  return Mustache.render(text, new VariablesContext(variables), partials, { escape: (value: string) => value });
}
