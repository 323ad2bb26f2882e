import { Invalid } from "../../../control/errors.ts";
import { type SealedValue, hintOf, looksMasked, sealValue } from "../../../control/sealed-values.ts";
import { type TrustedHosts, checkCustomHost } from "../../../security/custom-host.ts";
import type { Secrets } from "../../../store/ports.ts";
import type { ConfigurationsBody } from "./schemas.ts";
import type { McpAuthType, McpIntegrationConfigurations } from "../records.ts";

/**
 * An MCP integration's `configurations` (records.ts): how the gateway authenticates to the upstream. Secret
 * values (header values, `client_secret`) are sealed when they arrive and shown only as hints; a hint sent back
 * keeps the stored value. On update, fields merge one by one (`null` removes one); `headers` is replaced as a
 * whole, each masked value keeping the stored value of the same header.
 */

export async function mergeConfigurations(
  deps: { secrets: Secrets; trustedHosts: TrustedHosts },
  input: ConfigurationsBody | undefined,
  previous: McpIntegrationConfigurations = {},
): Promise<McpIntegrationConfigurations> {
  const next: McpIntegrationConfigurations = { ...previous };
  if (!input) return next;
  if (input.headers !== undefined) {
    if (input.headers === null) delete next.headers;
    else next.headers = await sealHeaders(deps.secrets, input.headers, previous.headers ?? {});
  }
  if (input.client_id !== undefined) setOrDelete(next, "client_id", input.client_id);
  if (input.scope !== undefined) setOrDelete(next, "scope", input.scope);
  if (input.token_url !== undefined) {
    if (input.token_url === null) delete next.token_url;
    else next.token_url = (await checkCustomHost(input.token_url, deps.trustedHosts, "configurations.token_url")).href;
  }
  if (input.client_secret !== undefined) {
    if (input.client_secret === null) delete next.client_secret;
    else if (looksMasked(input.client_secret)) {
      if (!previous.client_secret) throw masked("configurations.client_secret");
    } else next.client_secret = await sealValue(deps.secrets, input.client_secret);
  }
  return next;
}

async function sealHeaders(
  secrets: Secrets,
  headers: Record<string, string>,
  previous: Record<string, SealedValue>,
): Promise<Record<string, SealedValue>> {
  const stored = new Map(Object.entries(previous).map(([name, value]) => [name.toLowerCase(), value]));
  const sealed: Record<string, SealedValue> = {};
  const seen = new Set<string>();
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if (seen.has(key))
      throw new Invalid(`Header '${name}' is given twice.`, { param: `configurations.headers.${name}` });
    seen.add(key);
    if (looksMasked(value)) {
      const kept = stored.get(key);
      if (!kept) throw masked(`configurations.headers.${name}`);
      sealed[name] = kept;
    } else sealed[name] = await sealValue(secrets, value);
  }
  return sealed;
}

const masked = (param: string) =>
  new Invalid("A masked value can only keep a stored secret, and none is stored here; send the value itself.", {
    param,
    code: "invalid_value",
  });

function setOrDelete(target: McpIntegrationConfigurations, field: "client_id" | "scope", value: string | null) {
  if (value === null || value === "") delete target[field];
  else target[field] = value;
}

/** What an auth type needs once the configurations are merged. */
export function checkConfigurations(authType: McpAuthType, configurations: McpIntegrationConfigurations): void {
  if (authType === "oauth_client_credentials") {
    if (!configurations.client_id)
      throw new Invalid("oauth_client_credentials needs configurations.client_id.", {
        param: "configurations.client_id",
        code: "missing_required_parameter",
      });
    if (!configurations.client_secret)
      throw new Invalid("oauth_client_credentials needs configurations.client_secret.", {
        param: "configurations.client_secret",
        code: "missing_required_parameter",
      });
  }
  if (authType === "headers" && Object.keys(configurations.headers ?? {}).length === 0) {
    throw new Invalid("auth_type 'headers' needs at least one header in configurations.headers.", {
      param: "configurations.headers",
      code: "missing_required_parameter",
    });
  }
}

/** The configurations as clients see them: secrets as hints only. */
export function presentConfigurations(configurations: McpIntegrationConfigurations): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  if (configurations.headers)
    view.headers = Object.fromEntries(
      Object.entries(configurations.headers).map(([name, value]) => [name, hintOf(value)]),
    );
  if (configurations.client_id) view.client_id = configurations.client_id;
  if (configurations.client_secret) view.client_secret = hintOf(configurations.client_secret);
  if (configurations.token_url) view.token_url = configurations.token_url;
  if (configurations.scope) view.scope = configurations.scope;
  return view;
}

/** Every secret stored in the configurations, opened: to scrub them out of upstream error messages. */
export function sealedValuesOf(configurations: McpIntegrationConfigurations): SealedValue[] {
  return [
    ...Object.values(configurations.headers ?? {}),
    ...(configurations.client_secret ? [configurations.client_secret] : []),
  ];
}
