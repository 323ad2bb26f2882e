import { HttpError } from "../../../http/errors.ts";
import { McpToolError } from "../tool-host.ts";

/** An MCP tool host's refusal as the HTTP error the client gets (status and code kept), naming the tools entry. */
export function httpErrorOfHost(error: unknown, param: string): unknown {
  if (!(error instanceof McpToolError)) return error;
  return new HttpError(error.status, `${param}: ${error.message}`, { code: error.code, param });
}
