import { timingSafeEqual } from "node:crypto";
import { newId, newSecret, sha256Hex } from "../../../util/ids.ts";
import type { Records } from "../../../store/ports.ts";
import { type ClientAuthMethod, CLIENT_AUTH_METHODS } from "./metadata.ts";
import { OAuthError } from "./oauth-errors.ts";
import { redirectUrisProblem } from "./redirect-uris.ts";

/**
 * OAuth clients registered dynamically (RFC 7591). pk `OAUTHCLIENT#<client_id>`; a confidential client's secret
 * is shown once and only its sha256 kept. Registration is anonymous, so a client record carries a `ttl`: a client
 * that never gets a grant is forgotten after GATEWAY_OAUTH_UNUSED_CLIENT_TTL_SECONDS, and each grant pushes its
 * expiry past the grant's refresh tokens.
 */

export interface OAuthClient {
  client_id: string;
  client_secret_hash?: string;
  client_id_issued_at: number;
  redirect_uris: string[];
  token_endpoint_auth_method: ClientAuthMethod;
  grant_types: string[];
  response_types: string[];
  client_name?: string;
  client_uri?: string;
  scope?: string;
  software_id?: string;
  software_version?: string;
  ttl: number;
}

const clientKey = (clientId: string) => ({ pk: `OAUTHCLIENT#${clientId}`, sk: "OAUTHCLIENT" });

const GRANT_TYPES = new Set(["authorization_code", "refresh_token"]);

function optionalText(body: Record<string, unknown>, field: string, max: number): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || value.length > max) {
    throw new OAuthError("invalid_client_metadata", `'${field}' must be a string of at most ${max} characters.`, {
      param: field,
    });
  }
  return value;
}

function optionalHttpsUrl(body: Record<string, unknown>, field: string): string | undefined {
  const value = optionalText(body, field, 2000);
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== "https:" && url?.protocol !== "http:") {
    throw new OAuthError("invalid_client_metadata", `'${field}' must be an http(s) URL.`, { param: field });
  }
  return value;
}

/** Validated client metadata from a registration body (RFC 7591 section 2). */
export function parseClientMetadata(
  body: unknown,
): Omit<OAuthClient, "client_id" | "client_secret_hash" | "client_id_issued_at" | "ttl"> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new OAuthError("invalid_client_metadata", "The registration body must be a JSON object.");
  }
  const fields = body as Record<string, unknown>;
  const redirectProblem = redirectUrisProblem(fields.redirect_uris);
  if (redirectProblem) throw new OAuthError("invalid_redirect_uri", redirectProblem, { param: "redirect_uris" });
  const method = fields.token_endpoint_auth_method ?? "client_secret_basic";
  if (!CLIENT_AUTH_METHODS.includes(method as ClientAuthMethod)) {
    throw new OAuthError(
      "invalid_client_metadata",
      `'token_endpoint_auth_method' must be one of ${CLIENT_AUTH_METHODS.join(", ")}.`,
      { param: "token_endpoint_auth_method" },
    );
  }
  const grantTypes = fields.grant_types ?? ["authorization_code", "refresh_token"];
  if (
    !Array.isArray(grantTypes) ||
    grantTypes.length === 0 ||
    grantTypes.some((grant) => typeof grant !== "string" || !GRANT_TYPES.has(grant))
  ) {
    throw new OAuthError(
      "invalid_client_metadata",
      "'grant_types' may hold only authorization_code and refresh_token.",
      {
        param: "grant_types",
      },
    );
  }
  const responseTypes = fields.response_types ?? ["code"];
  if (!Array.isArray(responseTypes) || responseTypes.length !== 1 || responseTypes[0] !== "code") {
    throw new OAuthError("invalid_client_metadata", "'response_types' must be [\"code\"].", {
      param: "response_types",
    });
  }
  return {
    redirect_uris: [...new Set(fields.redirect_uris as string[])],
    token_endpoint_auth_method: method as ClientAuthMethod,
    grant_types: [...new Set(grantTypes as string[])],
    response_types: ["code"],
    client_name: optionalText(fields, "client_name", 200),
    client_uri: optionalHttpsUrl(fields, "client_uri"),
    scope: optionalText(fields, "scope", 500),
    software_id: optionalText(fields, "software_id", 200),
    software_version: optionalText(fields, "software_version", 100),
  };
}

/** Registers a client; answers its record and, for a confidential client, the secret (shown this once). */
export async function registerClient(
  records: Records,
  metadata: ReturnType<typeof parseClientMetadata>,
  unusedTtlSeconds: number,
): Promise<{ client: OAuthClient; secret?: string }> {
  const now = Math.floor(Date.now() / 1000);
  const secret = metadata.token_endpoint_auth_method === "none" ? undefined : newSecret("gwocs");
  const client: OAuthClient = {
    ...metadata,
    client_id: newId("gwoc"),
    client_id_issued_at: now,
    ...(secret ? { client_secret_hash: sha256Hex(secret) } : {}),
    ttl: now + unusedTtlSeconds,
  };
  const stored = Object.fromEntries(Object.entries(client).filter(([, value]) => value !== undefined));
  await records.put({ ...clientKey(client.client_id), ...stored, ttl: client.ttl }, { exists: false });
  return { client, secret };
}

/** The registration answer (RFC 7591 section 3.2.1): metadata, never the stored hash. */
export function presentClient(client: OAuthClient, secret?: string) {
  const { client_secret_hash: _hash, ttl: _ttl, ...metadata } = client;
  return { ...metadata, ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}) };
}

export async function findClient(records: Records, clientId: string): Promise<OAuthClient | undefined> {
  if (clientId.length > 200) return undefined;
  const key = clientKey(clientId);
  const item = await records.get(key.pk, key.sk);
  return item ? (item as unknown as OAuthClient) : undefined;
}

/** Keeps a client that has just been granted tokens until at least `until` (Unix seconds). */
export async function extendClient(records: Records, client: OAuthClient, until: number): Promise<void> {
  if (client.ttl >= until) return;
  const key = clientKey(client.client_id);
  await records.update(key.pk, key.sk, { set: { ttl: until } }).catch(() => undefined);
}

/** Client credentials as a token-type endpoint received them (RFC 6749 section 2.3.1). */
export interface PresentedClient {
  clientId?: string;
  secret?: string;
  /** How the secret came: the Authorization header (basic) or the body (post). */
  via?: "basic" | "post";
}

/** Reads client credentials from `Authorization: Basic` or the form body; both at once is refused. */
export function presentedClient(headers: Headers, form: URLSearchParams): PresentedClient {
  const header = headers.get("authorization");
  const basic = header && /^Basic\s+(\S+)\s*$/i.exec(header);
  if (basic) {
    if (form.has("client_secret")) {
      throw new OAuthError("invalid_request", "Send client credentials one way only.");
    }
    const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new OAuthError("invalid_client", "Malformed Basic credentials.", { headers: BASIC_CHALLENGE });
    const formDecode = (value: string) => {
      try {
        return decodeURIComponent(value.replace(/\+/g, " "));
      } catch {
        return value;
      }
    };
    return {
      clientId: formDecode(decoded.slice(0, colon)),
      secret: formDecode(decoded.slice(colon + 1)),
      via: "basic",
    };
  }
  const secret = form.get("client_secret") ?? undefined;
  return { clientId: form.get("client_id") ?? undefined, secret, via: secret ? "post" : undefined };
}

const BASIC_CHALLENGE = { "www-authenticate": 'Basic realm="gateway-oauth"' };

/**
 * The client the credentials prove: a public client by its id alone, a confidential one by its secret sent the
 * way it registered. `requireSecret` refuses public clients (introspection).
 */
export async function authenticateClient(
  records: Records,
  presented: PresentedClient,
  options: { requireSecret?: boolean } = {},
): Promise<OAuthClient> {
  const fail = (message: string) =>
    new OAuthError("invalid_client", message, presented.via === "basic" ? { headers: BASIC_CHALLENGE } : {});
  if (!presented.clientId) throw fail("Client authentication failed: no client_id.");
  const client = await findClient(records, presented.clientId);
  if (!client) throw fail("Client authentication failed: unknown client.");
  if (client.token_endpoint_auth_method === "none") {
    if (options.requireSecret) throw fail("This endpoint is for confidential clients.");
    if (presented.secret) throw fail("Client authentication failed: this is a public client.");
    return client;
  }
  const expectedVia = client.token_endpoint_auth_method === "client_secret_basic" ? "basic" : "post";
  if (!presented.secret || presented.via !== expectedVia || !client.client_secret_hash) {
    throw fail(`Client authentication failed: use ${client.token_endpoint_auth_method}.`);
  }
  const expected = Buffer.from(client.client_secret_hash);
  const actual = Buffer.from(sha256Hex(presented.secret));
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
    throw fail("Client authentication failed.");
  }
  return client;
}
