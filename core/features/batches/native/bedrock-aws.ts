import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import { regionOf } from "../../../providers/bedrock/http.ts";
import { signRequest } from "../../../providers/bedrock/sigv4.ts";
import type { ProviderTarget, TransformContext } from "../../../providers/types.ts";
import { UpstreamError } from "../../../providers/types.ts";
import { joinUrl } from "../../../providers/url.ts";
import type { NativeBatchContext } from "../types.ts";
import type { ProviderRequest } from "./provider-http.ts";

/**
 * The AWS side of Bedrock batch inference: the Bedrock control plane (`bedrock.{region}.amazonaws.com`, SigV4
 * service `bedrock`) and the S3 bucket the job reads its input from and writes its output to (SigV4 service `s3`).
 * A target's custom host stands in for both (proxies, mocks): the control plane at its root, S3 path-style under it.
 */

/** S3 bucket names: 3-63 of lowercase letters, digits, `.` and `-`; they become part of a host name. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** An IAM role ARN (the service role Bedrock assumes to read and write the bucket). */
const ROLE_ARN = /^arn:aws(-[^:]+)?:iam::\d{12}:role\/.{1,512}$/;
/** SHA-256 of an empty payload (S3 wants the payload hash on every request). */
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const transformContext = (target: ProviderTarget) => ({ target }) as TransformContext;

export function credentialsOf(target: ProviderTarget) {
  const aws = target.aws;
  if (!aws?.accessKeyId || !aws.secretAccessKey) {
    throw new UpstreamError(
      401,
      "Bedrock batches need AWS credentials (x-gateway-aws-access-key-id and x-gateway-aws-secret-access-key).",
      { type: "authentication_error", code: "missing_credentials" },
    );
  }
  return { accessKeyId: aws.accessKeyId, secretAccessKey: aws.secretAccessKey, sessionToken: aws.sessionToken };
}

export function bucketOf(target: ProviderTarget): string {
  const bucket = target.aws?.s3Bucket ?? "";
  if (!BUCKET.test(bucket) || bucket.includes("..")) {
    throw new UpstreamError(400, "Invalid S3 bucket for Bedrock batches.", {
      param: "aws_s3_bucket",
      code: "invalid_s3_bucket",
    });
  }
  return bucket;
}

export function roleArnOf(target: ProviderTarget): string {
  const role = target.aws?.roleArn ?? "";
  if (!ROLE_ARN.test(role)) {
    throw new UpstreamError(400, "Invalid IAM role ARN for Bedrock batches.", {
      param: "aws_role_arn",
      code: "invalid_role_arn",
    });
  }
  return role;
}

/** Whether the target names everything a Bedrock batch job needs (checked in full when it is used). */
export function hasBatchSetup(target: ProviderTarget): boolean {
  const aws = target.aws;
  return Boolean(aws?.accessKeyId && aws.secretAccessKey && aws.s3Bucket && aws.roleArn);
}

function controlBase(target: ProviderTarget): string {
  return target.customHost ?? `https://bedrock.${regionOf(transformContext(target))}.amazonaws.com`;
}

/** A signed call to the Bedrock control plane (JSON body or none). */
export async function bedrockControlRequest(
  ctx: NativeBatchContext,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
): Promise<ProviderRequest> {
  const url = joinUrl(controlBase(ctx.target), path);
  const text = body === undefined ? "" : JSON.stringify(body);
  const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
  const signed = await signRequest(
    { url, method, headers, body: text },
    regionOf(transformContext(ctx.target)),
    credentialsOf(ctx.target),
  );
  return { url, method, headers: signed, ...(body === undefined ? {} : { body: text }) };
}

/** Encodes an S3 key for the path: every segment URI-encoded, the slashes kept. */
const encodeKey = (key: string) => key.split("/").map(encodeURIComponent).join("/");

/** The object's URL: virtual-hosted on AWS (path-style for dotted names, whose host TLS would refuse), path-style on a custom host. */
export function s3ObjectUrl(target: ProviderTarget, bucket: string, key: string): string {
  if (target.customHost) return joinUrl(target.customHost, `/${bucket}/${encodeKey(key)}`);
  const region = regionOf(transformContext(target));
  if (bucket.includes(".")) return `https://s3.${region}.amazonaws.com/${bucket}/${encodeKey(key)}`;
  return `https://${bucket}.s3.${region}.amazonaws.com/${encodeKey(key)}`;
}

/**
 * A signed S3 object request. A PUT's body is streamed with its length given and `UNSIGNED-PAYLOAD` as its hash
 * (allowed over HTTPS; the body is never held whole to hash it).
 */
export async function s3Request(
  ctx: NativeBatchContext,
  method: "GET" | "PUT",
  key: string,
  put?: { body: ProviderRequest["body"]; length: number; contentType: string },
): Promise<ProviderRequest> {
  const bucket = bucketOf(ctx.target);
  const url = new URL(s3ObjectUrl(ctx.target, bucket, key));
  const headers: Record<string, string> = {
    "x-amz-content-sha256": put ? "UNSIGNED-PAYLOAD" : EMPTY_SHA256,
    ...(put ? { "content-type": put.contentType, "content-length": String(put.length) } : {}),
  };
  const credentials = credentialsOf(ctx.target);
  const signer = new SignatureV4({
    service: "s3",
    region: regionOf(transformContext(ctx.target)),
    sha256: Sha256,
    // S3 signs the path as it is sent (not encoded a second time).
    uriEscapePath: false,
    applyChecksum: false,
    credentials: {
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      ...(credentials.sessionToken ? { sessionToken: credentials.sessionToken } : {}),
    },
  });
  const signed = await signer.sign({
    method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query: {},
    headers: { ...headers, host: url.host },
  });
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) out[name.toLowerCase()] = String(value);
  return { url: url.href, method, headers: out, ...(put ? { body: put.body } : {}) };
}

/** `s3://bucket/key`, as the job's data configs name objects. */
export const s3Uri = (bucket: string, key: string) => `s3://${bucket}/${key}`;

/** The job id at the end of a job ARN (`arn:aws:bedrock:...:model-invocation-job/<id>`). */
export function jobIdOf(jobArn: string): string {
  const id = jobArn.slice(jobArn.lastIndexOf("/") + 1);
  if (!/^[a-zA-Z0-9]{1,64}$/.test(id)) {
    throw new UpstreamError(502, "Bedrock answered a job ARN without a job id.", { type: "server_error" });
  }
  return id;
}
