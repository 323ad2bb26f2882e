import type { McpToolResult } from "../tool-host.ts";

/**
 * An MCP tool result as the text of a chat `tool` message: text content joined by blank lines, other content
 * (images, resources, links) as JSON, and structured content as JSON when there is no text. A result the tool
 * marked `isError` is told to the model as an error, so it can correct its call or tell the user.
 */
export function toolMessageText(result: McpToolResult): string {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    if (item.type === "text" && typeof item.text === "string") parts.push(item.text);
    else if (item.type === "resource" && typeof (item.resource as { text?: unknown })?.text === "string")
      parts.push((item.resource as { text: string }).text);
    else parts.push(JSON.stringify(item));
  }
  let text = parts.join("\n\n");
  if (!text && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  return result.isError ? `Error: the tool failed. ${text || "(no details)"}` : text;
}

/** A failure to call the tool at all (refused, rate limited, unreachable, bad arguments), told to the model. */
export function toolErrorText(message: string): string {
  return `Error: the tool could not be called. ${message}`;
}
