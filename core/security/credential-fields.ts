/**
 * The one list of what counts as a credential, shared by everything that must hide or withhold one: audit-log
 * redaction (core/control/audit.ts), log masking of headers and inline configs (core/http/gateway-headers.ts),
 * sealing of credentials inside saved configs (core/control/configs/secrets.ts) and the forward-headers deny
 * list. Names are compared without case, `_` or `-`, so `aws_secret_access_key`, `awsSecretAccessKey` and the
 * header `x-gateway-aws-secret-access-key` are one name.
 */

/** Credential fields of provider targets as configs and integrations name them (snake_case). */
export const PROVIDER_CREDENTIAL_FIELDS = [
  "api_key",
  "aws_access_key_id",
  "aws_secret_access_key",
  "aws_session_token",
  "vertex_service_account_json",
] as const;

/** Other field names that hold secrets in control-plane records and logs. */
const OTHER_SECRET_FIELDS = [
  "key",
  "secret",
  "password",
  "token",
  "credential",
  "credentials",
  "private_key",
  "secret_hash",
  "client_secret",
  "access_token",
  "refresh_token",
  "authorization",
];

/** Endings that make any field a credential (`my_api_key`, `x-gateway-openai-api-key`, `bearer_token`). */
const SECRET_ENDINGS = [
  "apikey",
  "secretaccesskey",
  "sessiontoken",
  "accesskeyid",
  "serviceaccountjson",
  "token",
  "secret",
  "password",
];

/** Request headers whose values are credentials, whatever the route. */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "api-key",
  "x-api-key",
  "x-goog-api-key",
  "x-gateway-api-key",
  "x-portkey-api-key",
]);

const normalise = (name: string) => name.toLowerCase().replace(/[-_]/g, "");
const PROVIDER_NAMES = new Set(PROVIDER_CREDENTIAL_FIELDS.map(normalise));
const SECRET_NAMES = new Set([...PROVIDER_CREDENTIAL_FIELDS, ...OTHER_SECRET_FIELDS].map(normalise));

/** Whether a config node's field is a provider credential (`api_key`, `awsSecretAccessKey`...): sealed when saved. */
export function isProviderCredentialField(name: string): boolean {
  return PROVIDER_NAMES.has(normalise(name));
}

/** Whether a field (config key, record field, gateway header suffix) holds a credential. */
export function isCredentialField(name: string): boolean {
  const normalised = normalise(name);
  return SECRET_NAMES.has(normalised) || SECRET_ENDINGS.some((ending) => normalised.endsWith(ending));
}

/** Whether a request header carries a credential: the list above, or a gateway header named like one. */
export function isCredentialHeader(name: string): boolean {
  const lower = name.toLowerCase();
  if (CREDENTIAL_HEADERS.has(lower)) return true;
  if (!lower.startsWith("x-gateway-") && !lower.startsWith("x-portkey-")) return false;
  return isCredentialField(lower.slice(10));
}
