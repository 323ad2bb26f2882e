/** A chat function tool (what providers get): an MCP tool, or a context tool, as the model is offered it. */
export interface FunctionTool {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}
