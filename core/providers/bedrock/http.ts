// Static imports of these CommonJS packages: this module is itself loaded on first use (providers/registry.ts),
// and a dynamic import() of a CommonJS package loses its named exports in an esbuild split bundle.
import { type TransformContext, UpstreamError, type UpstreamRequest } from "../types.ts";
import { hostValueProblem } from "../../security/host-values.ts";
import { joinUrl } from "../url.ts";
import { EXTERNAL_ID, ROLE_ARN, assumeRole } from "./assume-role.ts";
import { signRequest } from "./sigv4.ts";

/** Signing name of the Bedrock runtime in SigV4 credential scopes. */
export const DEFAULT_REGION = "us-east-1";

export type BedrockOperation = "converse" | "converse-stream" | "invoke" | "invoke-with-response-stream";

/**
 * URI-encodes a model id for the path: ARNs of inference profiles contain `:` and `/`. Also escapes the
 * characters encodeURIComponent leaves alone (`!'()*`), as AWS SDKs do, so the canonical path is unambiguous.
 */
export function encodeModelId(modelId: string): string {
  return encodeURIComponent(modelId).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The target's region; it becomes part of the host name, so nothing but a region-shaped token gets there. */
export function regionOf(ctx: Pick<TransformContext, "target">): string {
  const region = ctx.target.aws?.region || DEFAULT_REGION;
  const problem = hostValueProblem("aws_region", region);
  if (problem)
    throw new UpstreamError(400, `Invalid AWS region: ${problem}`, { param: "aws_region", code: "invalid_region" });
  return region;
}

export function bedrockUrl(ctx: TransformContext, modelId: string, operation: BedrockOperation): string {
  const base = ctx.target.customHost ?? `https://bedrock-runtime.${regionOf(ctx)}.amazonaws.com`;
  return joinUrl(base, `/model/${encodeModelId(modelId)}/${operation}`);
}

/** Headers the adapter owns; forwarded headers never override them (that would break the signature). */
const RESERVED = new Set([
  "host",
  "authorization",
  "content-type",
  "content-length",
  "x-amz-date",
  "x-amz-security-token",
  "x-amz-content-sha256",
]);

/**
 * Builds a POST to Bedrock with a JSON body, authenticated either with SigV4 (AWS access keys in
 * ctx.target.aws) or, for Bedrock API keys, with `Authorization: Bearer`. AWS keys win when both are given.
 * The body is signed as the UTF-8 bytes of the string that is sent, so the payload hash matches what fetch sends.
 */
export async function bedrockPost(
  ctx: TransformContext,
  url: string,
  payload: unknown,
  signingDate: Date = new Date(),
): Promise<UpstreamRequest> {
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(ctx.target.forwardHeaders ?? {})) {
    if (!RESERVED.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  headers["content-type"] = "application/json";

  const aws = ctx.target.aws;
  if (aws?.accessKeyId && aws.secretAccessKey) {
    const credentials = await signingCredentials(ctx);
    const signed = await signRequest({ url, method: "POST", headers, body }, regionOf(ctx), credentials, signingDate);
    return { url, method: "POST", headers: signed, body };
  }
  if (ctx.target.apiKey) {
    headers.authorization = `Bearer ${ctx.target.apiKey}`;
    return { url, method: "POST", headers, body };
  }
  throw new UpstreamError(
    401,
    "Bedrock needs AWS credentials (x-gateway-aws-access-key-id and x-gateway-aws-secret-access-key) or a Bedrock API key",
    { type: "authentication_error", code: "missing_credentials" },
  );
}

/**
 * The credentials a Bedrock call is signed with: the target's AWS keys, or with `aws_auth_type: assumedRole`
 * the temporary credentials of its `aws_role_arn`, assumed with those keys and the request's session tags.
 */
export async function signingCredentials(
  ctx: TransformContext,
  stsEndpoint?: string,
): Promise<{ accessKeyId?: string; secretAccessKey?: string; sessionToken?: string }> {
  const aws = ctx.target.aws!;
  if (aws.authType !== "assumedRole") return aws;
  if (!aws.roleArn || !ROLE_ARN.test(aws.roleArn))
    throw new UpstreamError(400, "aws_auth_type assumedRole needs a valid aws_role_arn.", {
      param: "aws_role_arn",
      code: "invalid_role_arn",
    });
  if (aws.externalId !== undefined && !EXTERNAL_ID.test(aws.externalId))
    throw new UpstreamError(400, "Invalid aws_external_id.", { param: "aws_external_id", code: "invalid_external_id" });
  return assumeRole(
    {
      roleArn: aws.roleArn,
      externalId: aws.externalId,
      sessionTags: aws.sessionTags,
      region: regionOf(ctx),
      base: { accessKeyId: aws.accessKeyId!, secretAccessKey: aws.secretAccessKey!, sessionToken: aws.sessionToken },
    },
    { signal: ctx.signal, trusted: ctx.trustedHosts, endpoint: stsEndpoint },
  );
}
