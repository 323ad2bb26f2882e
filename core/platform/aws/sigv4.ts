import { createHmac } from "node:crypto";
import { sha256Hex } from "../../util/ids.ts";

/**
 * AWS Signature Version 4 for the requests our own AWS clients send: a body of text, no query string
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html). Written on
 * node:crypto, which the functions load anyway, because @smithy/signature-v4 imports @smithy/core's barrel
 * modules and, with code splitting, drags the code the lazily loaded SDK clients share into every cold start.
 * test/unit/platform checks it against @smithy/signature-v4.
 */

export interface SigningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SigningScope {
  region: string;
  service: string;
}

/**
 * The headers to send: `headers` (lower-case names) plus `host`, `x-amz-date`, `x-amz-security-token` (with a
 * session token) and `authorization`. Every header given is signed.
 */
export function signRequest(
  request: { method: string; url: URL; headers: Record<string, string>; body: string },
  scope: SigningScope,
  credentials: SigningCredentials,
  date: Date = new Date(),
): Record<string, string> {
  if (request.url.search) throw new Error("signRequest does not sign query strings");
  const amzDate = date
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, ""); // 20260102T030405Z
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = { ...request.headers, host: request.url.host, "x-amz-date": amzDate };
  if (credentials.sessionToken) headers["x-amz-security-token"] = credentials.sessionToken;

  const names = Object.keys(headers).sort();
  const signedHeaders = names.join(";");
  const canonicalRequest = [
    request.method,
    canonicalPath(request.url.pathname),
    "", // query string
    ...names.map((name) => `${name}:${headers[name]!.trim().replace(/\s+/g, " ")}`),
    "",
    signedHeaders,
    sha256Hex(request.body),
  ].join("\n");
  const credentialScope = `${day}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, credentialScope, sha256Hex(canonicalRequest)].join("\n");
  const signature = createHmac("sha256", signingKey(credentials.secretAccessKey, day, scope))
    .update(stringToSign)
    .digest("hex");
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}

/** Every segment encoded once more, as SigV4 asks of every service but S3 (the path is already URL-encoded). */
function canonicalPath(path: string): string {
  return path
    .split("/")
    .map((segment) =>
      encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    )
    .join("/");
}

/** The derived key changes once a day per secret, region and service: keep the last one. */
let cachedKey: { id: string; key: Buffer } | undefined;

function signingKey(secret: string, day: string, scope: SigningScope): Buffer {
  const id = `${secret}\u0000${day}\u0000${scope.region}\u0000${scope.service}`;
  if (cachedKey?.id !== id) {
    let key = createHmac("sha256", `AWS4${secret}`).update(day).digest();
    for (const part of [scope.region, scope.service, "aws4_request"])
      key = createHmac("sha256", key).update(part).digest();
    cachedKey = { id, key };
  }
  return cachedKey.key;
}
