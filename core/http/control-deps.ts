import type { ApiKeyDeps } from "../control/api-keys-service.ts";
import type { ControlDeps } from "../control/deps.ts";
import type { IntegrationDeps } from "../control/integrations-service.ts";
import type { RequestContext } from "./context.ts";

/** What every control-plane service call takes from the request: the records store and the trace id. */
export const controlDeps = (ctx: RequestContext): ControlDeps => ({
  records: ctx.services.stores.records,
  traceId: ctx.traceId,
});

/**
 * Services that store secrets (integrations, virtual keys, configs, guardrails) also seal them, and those that
 * store provider targets check their hosts.
 */
export const credentialDeps = (ctx: RequestContext): IntegrationDeps => ({
  ...controlDeps(ctx),
  secrets: ctx.services.stores.secrets,
  trustedHosts: ctx.services.trustedHosts,
  secretRefs: ctx.services.stores.secretRefs,
});

/** API keys also read organisation settings, drop cached key lookups and tell the enforcer of key limits. */
export const apiKeyDeps = (ctx: RequestContext): ApiKeyDeps => ({
  ...controlDeps(ctx),
  organisationSettings: (organisationId) => ctx.services.orgSettings.get(organisationId),
  forgetKey: (secretHash) => ctx.services.apiKeys.forget(secretHash),
  policyChanged: (organisationId, policy, removedId) =>
    ctx.services.policies.changed(organisationId, policy, removedId),
});
