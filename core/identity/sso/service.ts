import type { Principal } from "../../auth/principal.ts";
import { requireOrganisationAdmin } from "../../control/access.ts";
import { type ControlDeps, audit } from "../../control/deps.ts";
import { Invalid } from "../../control/errors.ts";
import { type Lazy, resolveLazy } from "../../control/lazy.ts";
import { type SealedValue, looksMasked, sealValue } from "../../control/sealed-values.ts";
import type { Secrets } from "../../store/ports.ts";
import { publicJwks, signingKey } from "./client-keys.ts";
import type { SsoClientInput, SsoSettingsUpdateInput } from "./schemas.ts";
import {
  type SsoClientRecord,
  type SsoSettingsRecord,
  presentSsoSettings,
  readSsoSettings,
  writeSsoSettings,
} from "./settings.ts";

/** Organisation SSO settings (spec 5.5), for organisation admins only; every change is audited. */

export interface SsoDeps extends ControlDeps {
  secrets: Secrets;
  /** Rejects issuer URLs that target private addresses or metadata hosts (core/security/custom-host.ts). */
  checkIssuer(issuer: string): Promise<void>;
  /** Forgets this process's cached IdP configurations of the organisation. */
  ssoChanged(organisationId: string): void;
}

export type SsoSettingsView = ReturnType<typeof presentSsoSettings>;

export async function getSsoSettings(deps: SsoDeps, principal: Principal): Promise<SsoSettingsView> {
  requireOrganisationAdmin(principal);
  return presentSsoSettings(await readSsoSettings(deps.records, principal.organisationId));
}

export async function updateSsoSettings(
  deps: SsoDeps,
  principal: Principal,
  lazyInput: Lazy<SsoSettingsUpdateInput>,
): Promise<SsoSettingsView> {
  requireOrganisationAdmin(principal);
  const input = await resolveLazy(lazyInput);
  await deps.checkIssuer(input.issuer);
  const current = await readSsoSettings(deps.records, principal.organisationId);

  const ids = input.additional_clients.map((client) => client.sso_client_id);
  const duplicate = ids.find((id, index) => ids.indexOf(id) !== index);
  if (duplicate) throw new Invalid(`Duplicate sso_client_id '${duplicate}'.`, { param: "additional_clients" });

  const main = await buildClient(deps.secrets, input, current, "");
  const additional_clients = [];
  for (const [index, client] of input.additional_clients.entries()) {
    const previous = current?.additional_clients.find((known) => known.sso_client_id === client.sso_client_id);
    const built = await buildClient(deps.secrets, client, previous, `additional_clients[${index}].`);
    additional_clients.push({ sso_client_id: client.sso_client_id, ...built });
  }
  const updated: SsoSettingsRecord = {
    organisationId: principal.organisationId,
    enabled: input.enabled,
    issuer: input.issuer,
    ...main,
    disable_auto_provision_user: input.disable_auto_provision_user,
    allowed_domains: [...new Set(input.allowed_domains)],
    additional_clients,
    version: (current?.version ?? 0) + 1,
    updatedAt: Math.floor(Date.now() / 1000),
  };
  await writeSsoSettings(deps.records, updated);
  deps.ssoChanged(principal.organisationId);
  const after = presentSsoSettings(updated);
  await audit(deps, principal, {
    action: current ? "update" : "create",
    resourceType: "sso_settings",
    resourceId: principal.organisationId,
    before: current ? presentSsoSettings(current) : undefined,
    after,
  });
  return after;
}

/** A client's record: new secrets sealed, omitted or masked ones kept from `previous`. */
async function buildClient(
  secrets: Secrets,
  input: SsoClientInput,
  previous: SsoClientRecord | undefined,
  param: string,
): Promise<SsoClientRecord> {
  const sameClient = previous?.client_id === input.client_id;
  let client_secret: SealedValue | undefined;
  if (input.client_secret !== undefined && !looksMasked(input.client_secret)) {
    client_secret = await sealValue(secrets, input.client_secret);
  } else if (sameClient) {
    client_secret = previous?.client_secret;
  }
  let jwks: SealedValue | undefined;
  let jwks_public: SsoClientRecord["jwks_public"];
  if (input.jwks) {
    try {
      await signingKey(input.jwks);
    } catch {
      throw new Invalid("The first key of 'jwks' is not a usable private signing key.", { param: `${param}jwks` });
    }
    jwks = await sealValue(secrets, input.jwks);
    jwks_public = publicJwks(input.jwks);
  } else if (sameClient) {
    jwks = previous?.jwks;
    jwks_public = previous?.jwks_public;
  }
  const method = input.token_endpoint_auth_method;
  if (method === "private_key_jwt" && !jwks)
    throw new Invalid("private_key_jwt needs 'jwks' (a private key set).", { param: `${param}jwks` });
  if (method !== "private_key_jwt" && !client_secret)
    throw new Invalid(`${method} needs 'client_secret'.`, { param: `${param}client_secret` });
  return {
    client_id: input.client_id,
    token_endpoint_auth_method: method,
    ...(client_secret ? { client_secret } : {}),
    ...(jwks ? { jwks, jwks_public } : {}),
    scopes: input.scopes.includes("openid") ? input.scopes : ["openid", ...input.scopes],
  };
}
