import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";

export const BEDROCK_SIGNING_SERVICE = "bedrock";

/**
 * Signs a request with SigV4 for the Bedrock runtime. Returns the headers to send: the input headers plus
 * `host`, `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` (with a session token) and
 * `authorization`. Every returned header except `authorization` is in SignedHeaders.
 */
export async function signRequest(
  request: { url: string; method: string; headers: Record<string, string>; body: string | Uint8Array },
  region: string,
  credentials: { accessKeyId?: string; secretAccessKey?: string; sessionToken?: string },
  signingDate: Date = new Date(),
  service: string = BEDROCK_SIGNING_SERVICE,
): Promise<Record<string, string>> {
  const url = new URL(request.url);
  const signer = new SignatureV4({
    service,
    region,
    sha256: Sha256,
    credentials: {
      accessKeyId: credentials.accessKeyId ?? "",
      secretAccessKey: credentials.secretAccessKey ?? "",
      ...(credentials.sessionToken ? { sessionToken: credentials.sessionToken } : {}),
    },
  });
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of url.searchParams) {
    const previous = query[key];
    query[key] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      // The path as it goes on the wire (model id already percent-encoded); the signer encodes it once more
      // for the canonical request, as SigV4 requires for every service but S3.
      path: url.pathname,
      query,
      headers: { ...request.headers, host: url.host },
      body: request.body,
    },
    { signingDate },
  );
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) out[name.toLowerCase()] = String(value);
  return out;
}
