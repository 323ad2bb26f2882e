import { badRequest } from "../../http/errors.ts";
import {
  type GatewayRequestHeaders,
  gatewayHeader,
  isForwardable,
  parseGatewayHeaders,
} from "../../http/gateway-headers.ts";
import type { HeaderSource } from "../../http/request-headers.ts";
import { providerIdOf } from "../../providers/registry.ts";
import { VERTEX_REQUEST_TYPE_HEADER, VERTEX_REQUEST_TYPES } from "../../providers/vertex/request-type.ts";
import type { ProviderTarget } from "../../providers/types.ts";
import { checkedCustomHostBase, type TrustedHosts } from "../../security/custom-host.ts";
import { type HostValueField, hostValueProblem } from "../../security/host-values.ts";

/**
 * Resolves the provider target of a request from its headers (spec 5.2): `x-gateway-provider` +
 * `Authorization`, optionally `x-gateway-custom-host`, and the cloud header families. Saved providers
 * (`@slug`), virtual keys and configs are resolved by the routing layer (core/inference/gateway/plan.ts).
 * Returns undefined when the request names no provider.
 */
export async function targetFromHeaders(
  headers: HeaderSource,
  trusted: TrustedHosts,
  gateway: GatewayRequestHeaders = parseGatewayHeaders(headers),
  authorizationIsCaller = false,
): Promise<ProviderTarget | undefined> {
  const provider = gateway.provider;
  if (!provider) return undefined;
  const id = provider.toLowerCase();
  if (provider.startsWith("@") || !providerIdOf(id)) {
    throw badRequest(
      `Unknown provider '${provider}'. docs/providers.md lists the supported provider ids.`,
      "x-gateway-provider",
      "invalid_provider",
    );
  }
  const target: ProviderTarget = { provider: id, ...headerCredentials(headers, gateway, authorizationIsCaller) };
  if (gateway.customHost) target.customHost = await checkedCustomHostBase(gateway.customHost, trusted);
  const forwardHeaders = forwardedValues(headers, gateway.forwardHeaders);
  if (forwardHeaders) target.forwardHeaders = forwardHeaders;
  return target;
}

/**
 * The provider key (requestProviderKey) and the cloud header families of spec 5.2 (Vertex's includes Google's own
 * `X-Vertex-AI-LLM-Request-Type`). `authorizationIsCaller`: the
 * request authenticated with a JWT in `Authorization`, which is then the caller's token, never a provider key.
 */
export function headerCredentials(
  headers: HeaderSource,
  gateway: GatewayRequestHeaders,
  authorizationIsCaller = false,
): Omit<ProviderTarget, "provider"> {
  const target: Omit<ProviderTarget, "provider"> = {};
  const apiKey = requestProviderKey(headers, gateway, authorizationIsCaller);
  if (apiKey) target.apiKey = apiKey;
  // The cloud headers come from the gateway headers parsed once per request (no header lookups per name).
  const gatewayHeader = (name: string) => gateway.values.get(name);

  const azure = {
    resourceName: gatewayHeader("azure-resource-name"),
    deploymentId: gatewayHeader("azure-deployment-id"),
    apiVersion: gatewayHeader("azure-api-version"),
    modelName: gatewayHeader("azure-model-name"),
  };
  if (Object.values(azure).some(Boolean)) target.azure = azure;

  const vertex = {
    projectId: gatewayHeader("vertex-project-id"),
    region: gatewayHeader("vertex-region"),
    serviceAccountJson: gatewayHeader("vertex-service-account-json"),
    storageBucket: gatewayHeader("vertex-storage-bucket"),
    llmRequestType: vertexRequestType(headers.get(VERTEX_REQUEST_TYPE_HEADER)),
  };
  if (Object.values(vertex).some(Boolean)) target.vertex = vertex;

  const aws = {
    accessKeyId: gatewayHeader("aws-access-key-id"),
    secretAccessKey: gatewayHeader("aws-secret-access-key"),
    sessionToken: gatewayHeader("aws-session-token"),
    region: gatewayHeader("aws-region"),
    s3Bucket: gatewayHeader("aws-s3-bucket"),
    roleArn: gatewayHeader("aws-role-arn"),
    authType: awsAuthType(gatewayHeader("aws-auth-type")),
    externalId: gatewayHeader("aws-external-id"),
  };
  if (Object.values(aws).some(Boolean)) target.aws = aws;
  checkHostHeader("aws-region", "aws_region", aws.region);
  checkHostHeader("vertex-region", "vertex_region", vertex.region);
  checkHostHeader("vertex-project-id", "vertex_project_id", vertex.projectId);
  checkHostHeader("azure-resource-name", "resource_name", azure.resourceName);
  return target;
}

/**
 * The provider key a request carries: the one its wire format's clients send (`GatewayRequestHeaders.providerKey`:
 * `x-api-key` on /v1/messages...), else the bearer token of `Authorization` (spec 5.2). Never the gateway's own
 * key: a value equal to the request's `x-gateway-api-key`, or shaped like a gateway key, is no provider key (a
 * client that put its gateway key in both places would otherwise send it to the provider).
 */
export function requestProviderKey(
  headers: HeaderSource,
  gateway: GatewayRequestHeaders,
  authorizationIsCaller: boolean,
): string | undefined {
  let key = gateway.providerKey?.trim();
  if (!key && !authorizationIsCaller)
    key = headers
      .get("authorization")
      ?.replace(/^Bearer\s+/i, "")
      .trim();
  if (!key || GATEWAY_KEY_SHAPE.test(key) || key === gatewayHeader(headers, "api-key")?.trim()) return undefined;
  return key;
}

/** What core/auth/api-key-records.ts newApiKeySecret makes: `gk-` and 32 random bytes in base64url. */
const GATEWAY_KEY_SHAPE = /^gk-[A-Za-z0-9_-]{43}$/;

/** `X-Vertex-AI-LLM-Request-Type`, as Google names it: `dedicated` or `shared` (any case), else 400. */
function vertexRequestType(value: string | null): string | undefined {
  if (value === null) return undefined;
  const type = value.trim().toLowerCase();
  if ((VERTEX_REQUEST_TYPES as readonly string[]).includes(type)) return type;
  throw badRequest(
    `Invalid X-Vertex-AI-LLM-Request-Type: expected ${VERTEX_REQUEST_TYPES.join(" or ")}.`,
    VERTEX_REQUEST_TYPE_HEADER,
    "invalid_header",
  );
}

/** `x-gateway-aws-auth-type`: `assumedRole` (any case), or absent for the target's own keys. */
function awsAuthType(value: string | undefined): "assumedRole" | undefined {
  if (value === undefined) return undefined;
  if (value.toLowerCase() === "assumedrole") return "assumedRole";
  throw badRequest(
    "Invalid x-gateway-aws-auth-type: expected 'assumedRole'.",
    "x-gateway-aws-auth-type",
    "invalid_header",
  );
}

/** A header whose value becomes part of a host name: 400 naming the header unless it has the strict shape. */
function checkHostHeader(header: string, field: HostValueField, value: string | undefined): void {
  if (value === undefined) return;
  const problem = hostValueProblem(field, value);
  if (problem) throw badRequest(`Invalid x-gateway-${header}: ${problem}`, `x-gateway-${header}`, "invalid_header");
}

/**
 * The values of the named request headers (those present), or undefined when none are. Credentials, the
 * gateway's own headers and hop-by-hop headers are never forwarded, whoever named them (header or config).
 */
export function forwardedValues(headers: HeaderSource, names: readonly string[]): Record<string, string> | undefined {
  if (names.length === 0) return undefined;
  const values: Record<string, string> = {};
  let found = false;
  for (const name of names) {
    if (!isForwardable(name)) continue;
    const value = headers.get(name);
    if (value === null) continue;
    values[name] = value;
    found = true;
  }
  return found ? values : undefined;
}
