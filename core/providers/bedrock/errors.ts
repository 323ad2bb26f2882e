import { mapUpstreamError } from "../errors.ts";

/**
 * Bedrock error answers are AWS JSON errors: `{"message": "..."}` (sometimes `Message`), with the exception
 * name in the `x-amzn-errortype` header, which mapError does not receive. The name is recovered from a
 * `__type` field when present, else from the status as Bedrock documents it, so clients get a stable `code`.
 */
const EXCEPTION_BY_STATUS: Record<number, string> = {
  400: "ValidationException",
  403: "AccessDeniedException",
  404: "ResourceNotFoundException",
  408: "ModelTimeoutException",
  424: "ModelErrorException",
  429: "ThrottlingException",
  500: "InternalServerException",
  503: "ServiceUnavailableException",
};

export function mapBedrockError(
  status: number,
  body: string,
): { message: string; type: string; code: string | null; param?: string | null } {
  const generic = mapUpstreamError(status, body);
  let parsed: any;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  // `__type` looks like `com.amazon.bedrock#ValidationException` or `ValidationException:http://...`.
  const rawType = typeof parsed?.__type === "string" ? parsed.__type : undefined;
  const exception = rawType?.split("#").pop()?.split(":")[0] || EXCEPTION_BY_STATUS[status];
  let code = exception ? snake(exception) : generic.code;
  if (status === 400 && /too long|context (length|window)|too many (input )?tokens/i.test(generic.message)) {
    code = "context_length_exceeded";
  }
  return { message: generic.message, type: generic.type, code, param: generic.param };
}

/** `ValidationException` -> `validation_exception`. */
function snake(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}
