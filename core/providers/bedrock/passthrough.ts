import {
  type PassthroughContext,
  type PassthroughEndpoint,
  type ProviderTarget,
  UpstreamError,
  type UpstreamRequest,
} from "../types.ts";
import { regionOf } from "./http.ts";
import { signRequest } from "./sigv4.ts";

/**
 * Pass-through to Bedrock (https://docs.aws.amazon.com/bedrock/latest/userguide/api-reference-overview.html).
 * Bedrock has four endpoints; the client's path picks one:
 *   /model/{id}/converse, /model/{id}/invoke-with-response-stream, ... -> https://bedrock-runtime.{region}.amazonaws.com
 *   /agent-runtime/{path}  -> https://bedrock-agent-runtime.{region}.amazonaws.com/{path} (knowledge bases, agents)
 *   /agent/{path}          -> https://bedrock-agent.{region}.amazonaws.com/{path}
 *   /control/{path}        -> https://bedrock.{region}.amazonaws.com/{path} (foundation models, jobs, guardrails)
 * The custom host replaces the runtime's host only (a VPC endpoint of the runtime; mocks). All four sign with the
 * service name `bedrock`. With AWS keys, `sign` computes SigV4 over the final method, URL, headers and body; with
 * a Bedrock API key, `Authorization: Bearer` is the auth. Event-stream answers are relayed as their bytes.
 */
const PREFIXED_HOSTS: ReadonlyArray<readonly [prefix: string, host: string]> = [
  ["/agent-runtime/", "bedrock-agent-runtime"],
  ["/agent/", "bedrock-agent"],
  ["/control/", "bedrock"],
];

/** Headers the signature owns: a client's copy would be signed as it is (or trusted as the payload hash). */
const SIGNING_HEADERS = new Set([
  "host",
  "authorization",
  "x-amz-date",
  "x-amz-security-token",
  "x-amz-content-sha256",
]);

export function bedrockPassthrough(target: ProviderTarget, ctx: PassthroughContext): PassthroughEndpoint {
  const region = regionOf({ target });
  const path = ctx.path ?? "/";
  const prefixed = PREFIXED_HOSTS.find(([prefix]) => path.startsWith(prefix));
  const baseUrl = prefixed
    ? `https://${prefixed[1]}.${region}.amazonaws.com`
    : (target.customHost ?? `https://bedrock-runtime.${region}.amazonaws.com`);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.forwardHeaders ?? {})) {
    if (!SIGNING_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  const endpoint: PassthroughEndpoint = {
    baseUrl,
    headers,
    ...(prefixed && { path: path.slice(prefixed[0].length - 1) + (ctx.search ?? "") }),
  };
  const aws = target.aws;
  if (aws?.accessKeyId && aws.secretAccessKey) {
    endpoint.sign = (request) => signPassthrough(request, region, aws);
    return endpoint;
  }
  if (target.apiKey) {
    headers.authorization = `Bearer ${target.apiKey}`;
    return endpoint;
  }
  throw new UpstreamError(
    401,
    "Bedrock needs AWS credentials (x-gateway-aws-access-key-id and x-gateway-aws-secret-access-key) or a Bedrock API key",
    { type: "authentication_error", code: "missing_credentials" },
  );
}

async function signPassthrough(
  request: UpstreamRequest,
  region: string,
  credentials: NonNullable<ProviderTarget["aws"]>,
): Promise<UpstreamRequest> {
  if (request.body instanceof ReadableStream) {
    throw new UpstreamError(400, "A signed Bedrock pass-through needs the whole body before sending", {
      code: "unsupported_body",
    });
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (!SIGNING_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  const body = request.body ?? "";
  const signed = await signRequest({ url: request.url, method: request.method, headers, body }, region, credentials);
  return { ...request, headers: signed };
}
