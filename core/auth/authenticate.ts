import { gatewayHeader } from "../http/gateway-headers.ts";
import { unauthorized } from "../http/errors.ts";
import type { Services } from "../services.ts";
import type { Principal } from "./principal.ts";

/** Authenticates a request by its gateway API key (JWTs join here with the control-plane work). */
export async function authenticate(request: Request, services: Services): Promise<Principal> {
  const apiKey = gatewayHeader(request.headers, "api-key");
  if (!apiKey) throw unauthorized("Missing API key. Send your gateway API key in the x-gateway-api-key header.");
  return services.apiKeys.authenticate(apiKey);
}
