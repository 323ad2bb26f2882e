import { createHash } from "node:crypto";
import { requestUpstream } from "../upstream/client.ts";
import { NO_TRUSTED_HOSTS, type TrustedHosts } from "../../security/custom-host.ts";
import { UpstreamError } from "../types.ts";
import { signRequest } from "./sigv4.ts";

/**
 * STS AssumeRole for Bedrock targets with `aws_auth_type: assumedRole` (spec 5.2: per-request session tags).
 * The gateway signs an AssumeRole call (Query API, version 2011-06-15, as the STS API reference "AssumeRole"
 * documents: form-encoded POST, XML answer) with the target's AWS keys, passes the request's session tags
 * (`Tags.member.N.Key/Value`) and external id, and signs the Bedrock call with the temporary credentials.
 * The call goes through the gateway's SSRF-guarded upstream client. Credentials are cached per base key, role,
 * external id and tag set until 5 minutes before they expire (at most CACHE_MAX_MS), so a hot path does not
 * call STS per request.
 */

export interface SessionCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  /** Unix milliseconds. */
  expiresAt: number;
}

export interface AssumeRoleRequest {
  roleArn: string;
  externalId?: string;
  sessionTags?: Record<string, string>;
  region: string;
  /** The keys that call STS (the target's own). */
  base: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

export interface AssumeRoleOptions {
  signal?: AbortSignal;
  trusted?: TrustedHosts;
  /** STS endpoint; the regional one by default (tests point it at a mock). */
  endpoint?: string;
  now?: () => number;
}

const SESSION_SECONDS = 900;
const REFRESH_BEFORE_MS = 5 * 60_000;
const CACHE_MAX_MS = 15 * 60_000;
const CACHE_MAX_ENTRIES = 500;
const STS_TIMEOUT_MS = 10_000;

export const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
export const EXTERNAL_ID = /^[\w+=,.@:/-]{2,1224}$/;

const cache = new Map<string, SessionCredentials>();
const pending = new Map<string, Promise<SessionCredentials>>();

function cacheKey(request: AssumeRoleRequest): string {
  const tags = Object.entries(request.sessionTags ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  // Hashed: the key holds the base access key id, kept out of heap dumps in clear.
  return createHash("sha256")
    .update(JSON.stringify([request.base.accessKeyId, request.roleArn, request.externalId ?? "", request.region, tags]))
    .digest("hex");
}

/** Temporary credentials for the role with these session tags: cached, or from one STS call shared by all. */
export async function assumeRole(
  request: AssumeRoleRequest,
  options: AssumeRoleOptions = {},
): Promise<SessionCredentials> {
  const now = (options.now ?? Date.now)();
  const key = cacheKey(request);
  const cached = cache.get(key);
  if (cached && cached.expiresAt - REFRESH_BEFORE_MS > now) return cached;
  let call = pending.get(key);
  if (!call) {
    call = callSts(request, options).finally(() => pending.delete(key));
    pending.set(key, call);
  }
  const credentials = await call;
  if (cache.size >= CACHE_MAX_ENTRIES) cache.clear();
  cache.set(key, { ...credentials, expiresAt: Math.min(credentials.expiresAt, now + CACHE_MAX_MS) });
  return credentials;
}

/** Forgets every cached session (tests). */
export function clearAssumedRoles(): void {
  cache.clear();
}

/** The form body of an AssumeRole call. */
export function assumeRoleForm(request: AssumeRoleRequest): string {
  const form = new URLSearchParams({
    Action: "AssumeRole",
    Version: "2011-06-15",
    RoleArn: request.roleArn,
    RoleSessionName: "ai-gateway",
    DurationSeconds: String(SESSION_SECONDS),
  });
  if (request.externalId) form.set("ExternalId", request.externalId);
  Object.entries(request.sessionTags ?? {}).forEach(([name, value], index) => {
    form.set(`Tags.member.${index + 1}.Key`, name);
    form.set(`Tags.member.${index + 1}.Value`, value);
  });
  return form.toString();
}

async function callSts(request: AssumeRoleRequest, options: AssumeRoleOptions): Promise<SessionCredentials> {
  const url = `${(options.endpoint ?? `https://sts.${request.region}.amazonaws.com`).replace(/\/+$/, "")}/`;
  const body = assumeRoleForm(request);
  const headers = await signRequest(
    { url, method: "POST", headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8" }, body },
    request.region,
    request.base,
    new Date(),
    "sts",
  );
  const reply = await requestUpstream(
    { url, method: "POST", headers, body },
    {
      timeoutMs: STS_TIMEOUT_MS,
      signal: options.signal ?? new AbortController().signal,
      trusted: options.trusted ?? NO_TRUSTED_HOSTS,
    },
  );
  const text = await reply.text();
  if (reply.status !== 200) {
    // The error's code only: STS messages quote the caller's ARN.
    const code = xmlValue(text, "Code") ?? `HTTP ${reply.status}`;
    throw new UpstreamError(reply.status === 403 ? 403 : 502, `AWS STS refused to assume the Bedrock role (${code}).`, {
      code: "assume_role_failed",
      param: "aws_role_arn",
    });
  }
  const accessKeyId = xmlValue(text, "AccessKeyId");
  const secretAccessKey = xmlValue(text, "SecretAccessKey");
  const sessionToken = xmlValue(text, "SessionToken");
  const expiration = Date.parse(xmlValue(text, "Expiration") ?? "");
  if (!accessKeyId || !secretAccessKey || !sessionToken || Number.isNaN(expiration))
    throw new UpstreamError(502, "AWS STS answered AssumeRole without credentials.", { code: "assume_role_failed" });
  return { accessKeyId, secretAccessKey, sessionToken, expiresAt: expiration };
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** The text of the first `<name>` element (STS answers are small and flat enough for this). */
function xmlValue(xml: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  if (!match) return undefined;
  return (match[1] ?? "").replace(/&(amp|lt|gt|quot|apos);/g, (_, entity: string) => ENTITIES[entity]!).trim();
}
