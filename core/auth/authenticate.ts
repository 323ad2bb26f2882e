import { gatewayHeader } from "../http/gateway-headers.ts";
import { unauthorized } from "../http/errors.ts";
import type { HeaderSource } from "../http/request-headers.ts";
import type { Services } from "../services.ts";
import { looksLikeJwt } from "./jwt.ts";
import type { Principal } from "./principal.ts";

/**
 * Authenticates a request: by its gateway API key (`x-gateway-api-key`, alias `x-portkey-api-key`), else by
 * a bearer JWT. On inference routes `Authorization` normally carries the provider's key, so it is read as a
 * JWT only when no gateway key is sent, JWT auth is configured and the token is a well-formed JWT.
 */
export async function authenticate(headers: HeaderSource, services: Services): Promise<Principal> {
  const apiKey = gatewayHeader(headers, "api-key");
  if (apiKey) return services.apiKeys.authenticate(apiKey);
  const token = bearerJwt(headers, services);
  if (token) return services.jwt.authenticate(token);
  throw unauthorized("Missing API key. Send your gateway API key in the x-gateway-api-key header.");
}

/** The bearer token when it is to be read as a JWT (see authenticate). */
export function bearerJwt(headers: HeaderSource, services: Services): string | undefined {
  if (!services.jwt?.enabled) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
  return match && looksLikeJwt(match[1]!) ? match[1] : undefined;
}
