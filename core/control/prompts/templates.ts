import Mustache from "mustache";
import { Invalid } from "../errors.ts";

/**
 * What the control plane checks of a saved template before storing it (the runtime renders it, core/features/prompts):
 * it must parse as mustache, and a chat template (a JSON array of `{role, content}` messages, as Portkey stores
 * them) must be well-formed. Also reads which partials (`{{> slug}}`) a template includes.
 */

const ROLES = new Set(["system", "developer", "user", "assistant", "tool", "function"]);

type Token = [type: string, value: string, start: number, end: number, children?: Token[]];

/**
 * The template's tokens. A fresh Writer each time: the shared one caches every template it parses, which would
 * keep every template ever validated in memory.
 */
function tokensOf(template: string, param: string): Token[] {
  try {
    return new Mustache.Writer().parse(template) as Token[];
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Invalid(`Invalid value for '${param}': not a valid mustache template (${reason}).`, {
      param,
      code: "invalid_template",
    });
  }
}

/** Throws Invalid naming `param` unless the template parses, and is a well-formed chat template if it is one. */
export function checkTemplate(template: string, param = "string"): void {
  tokensOf(template, param);
  const messages = chatMessagesOf(template, param);
  if (!messages) return;
  if (messages.length === 0) throw invalidChat(param, "a chat template needs at least one message");
  for (const [index, message] of messages.entries()) {
    if (!message || typeof message !== "object" || Array.isArray(message))
      throw invalidChat(param, `message ${index} is not an object`);
    const { role, content } = message as { role?: unknown; content?: unknown };
    if (typeof role !== "string" || !ROLES.has(role))
      throw invalidChat(param, `message ${index} has no valid 'role' (one of ${[...ROLES].join(", ")})`);
    if (typeof content !== "string" && !Array.isArray(content) && content !== null)
      throw invalidChat(param, `message ${index} has no 'content' (a string or an array of parts)`);
  }
}

/**
 * The messages of a chat template, or undefined for a text template. A template that starts like a JSON array
 * of objects (`[{`) is meant as a chat template, so malformed JSON there is an error rather than plain text.
 */
function chatMessagesOf(template: string, param: string): unknown[] | undefined {
  const trimmed = template.trim();
  if (!trimmed.startsWith("[")) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return Array.isArray(value) ? value : undefined;
  } catch {
    if (/^\[\s*\{/.test(trimmed)) throw invalidChat(param, "it starts like a JSON array of messages but is not JSON");
    return undefined;
  }
}

const invalidChat = (param: string, reason: string) =>
  new Invalid(`Invalid value for '${param}': not a valid chat template: ${reason}.`, {
    param,
    code: "invalid_template",
  });

/** The partial names a template includes (`{{> name}}`), nested sections included; empty when it does not parse. */
export function partialsIncluded(template: string): Set<string> {
  const names = new Set<string>();
  let tokens: Token[];
  try {
    tokens = new Mustache.Writer().parse(template) as Token[];
  } catch {
    return names;
  }
  const walk = (list: Token[]) => {
    for (const token of list) {
      if (token[0] === ">") names.add(token[1]);
      if (Array.isArray(token[4])) walk(token[4]);
    }
  };
  walk(tokens);
  return names;
}
