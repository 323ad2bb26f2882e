import { withinJsonDepth } from "../../../util/json-depth.ts";
import { splitFences } from "./fenced-blocks.ts";

/**
 * The JSON values a text carries, for `default.jsonSchema` and `default.jsonKeys`, in the order they are
 * tried: the whole text when it is JSON; else each ```json (or untagged) fenced block that parses; else the
 * span from the first `{` or `[` to the last `}` or `]` (an answer that wraps its JSON in a sentence). Each
 * piece is parsed once, so the work stays linear in the text; values nested deeper than the gateway's JSON
 * depth limit are left out.
 */
export function jsonInText(text: string): unknown[] {
  const whole = parsed(text);
  if (whole !== undefined) return [whole];
  if (text.includes("```") || text.includes("~~~")) {
    const values = splitFences(text)
      .blocks.filter((block) => block.language === "json" || block.language === "")
      .map((block) => parsed(block.content))
      .filter((value) => value !== undefined);
    if (values.length > 0) return values;
  }
  const value = parsed(outermostSpan(text));
  return value === undefined ? [] : [value];
}

function outermostSpan(text: string): string {
  const objectStart = text.indexOf("{");
  const arrayStart = text.indexOf("[");
  const object = objectStart >= 0 && (arrayStart < 0 || objectStart < arrayStart);
  const start = object ? objectStart : arrayStart;
  if (start < 0) return "";
  const end = text.lastIndexOf(object ? "}" : "]");
  return end > start ? text.slice(start, end + 1) : "";
}

function parsed(candidate: string): unknown {
  const trimmed = candidate.trim();
  // Only objects and arrays: a bare number or string is not what these checks look for.
  if (!(trimmed.startsWith("{") || trimmed.startsWith("["))) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return withinJsonDepth(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
