import { badRequest, notFound } from "../http/errors.ts";
import { gatewayHeader } from "../http/gateway-headers.ts";
import { findProvider } from "../providers/registry.ts";
import type { ProviderTarget } from "../providers/types.ts";
import { checkCustomHost, type TrustedHosts } from "../security/custom-host.ts";

/**
 * Resolves the provider target of a request from its headers (spec 5.2): `x-gateway-provider` +
 * `Authorization`, optionally `x-gateway-custom-host`, and the cloud header families. Saved providers
 * (`@slug`), virtual keys and configs are resolved by the routing layer before this is reached.
 * Returns undefined when the request names no provider.
 */
export async function targetFromHeaders(headers: Headers, trusted: TrustedHosts): Promise<ProviderTarget | undefined> {
  const provider = gatewayHeader(headers, "provider")?.trim();
  if (!provider) return undefined;
  if (provider.startsWith("@")) {
    throw notFound(
      `Unknown saved provider '${provider}'. Create an integration with that slug first.`,
      "provider_not_found",
    );
  }
  const id = provider.toLowerCase();
  if (!findProvider(id)) {
    throw badRequest(
      `Unknown provider '${provider}'. The README lists the supported provider ids.`,
      "x-gateway-provider",
      "invalid_provider",
    );
  }
  const target: ProviderTarget = { provider: id };

  const authorization = headers.get("authorization");
  if (authorization) target.apiKey = authorization.replace(/^Bearer\s+/i, "").trim() || undefined;

  const customHost = gatewayHeader(headers, "custom-host");
  if (customHost) target.customHost = (await checkCustomHost(customHost, trusted)).href.replace(/\/+$/, "");

  const azure = {
    resourceName: gatewayHeader(headers, "azure-resource-name") ?? undefined,
    deploymentId: gatewayHeader(headers, "azure-deployment-id") ?? undefined,
    apiVersion: gatewayHeader(headers, "azure-api-version") ?? undefined,
    modelName: gatewayHeader(headers, "azure-model-name") ?? undefined,
  };
  if (Object.values(azure).some(Boolean)) target.azure = azure;

  const vertex = {
    projectId: gatewayHeader(headers, "vertex-project-id") ?? undefined,
    region: gatewayHeader(headers, "vertex-region") ?? undefined,
    serviceAccountJson: gatewayHeader(headers, "vertex-service-account-json") ?? undefined,
  };
  if (Object.values(vertex).some(Boolean)) target.vertex = vertex;

  const aws = {
    accessKeyId: gatewayHeader(headers, "aws-access-key-id") ?? undefined,
    secretAccessKey: gatewayHeader(headers, "aws-secret-access-key") ?? undefined,
    sessionToken: gatewayHeader(headers, "aws-session-token") ?? undefined,
    region: gatewayHeader(headers, "aws-region") ?? undefined,
  };
  if (Object.values(aws).some(Boolean)) target.aws = aws;

  const forward = gatewayHeader(headers, "forward-headers");
  if (forward) {
    const forwardHeaders: Record<string, string> = {};
    for (const name of parseHeaderList(forward)) {
      const value = headers.get(name);
      if (value !== null) forwardHeaders[name] = value;
    }
    target.forwardHeaders = forwardHeaders;
  }
  return target;
}

/** A header list is sent as JSON array or comma-separated names. */
export function parseHeaderList(value: string): string[] {
  const trimmed = value.trim();
  if (trimmed.startsWith("[")) {
    try {
      const parsed = JSON.parse(trimmed);
      if (Array.isArray(parsed))
        return parsed
          .map(String)
          .map((name) => name.trim())
          .filter(Boolean);
    } catch {
      // fall through to the comma form
    }
  }
  return trimmed
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
}
