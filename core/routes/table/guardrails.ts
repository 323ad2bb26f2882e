import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Saved guardrails with versions (core/control/guardrails/service.ts). A workspace's guardrails need the
 * `guardrails.*` scopes, organisation-level ones the `organisation_guardrails.*` scopes: a route admits
 * either, and the service checks the one the guardrail needs.
 */
export const family: RouteFamily = {
  name: "guardrails",
  dataPlane: false,
  // Invoking a guardrail runs its checks (webhooks and judges, up to timeout_ms each).
  timeoutSeconds: 300,
  routes: [
    {
      // A saved guardrail's checks run on demand, without a model call (core/inference/guardrails/invocation.ts); each
      // check is bounded by its guardrail's timeout_ms (webhooks, model-graded judges).
      method: "POST",
      path: "/v1/guardrails/:id/invoke",
      handler: "invokeGuardrail",
      auth: "api_key",
      body: "json",
      scope: "guardrails.invoke",
    },
    {
      method: "POST",
      path: "/v1/guardrails",
      handler: "createGuardrail",
      auth: "api_key",
      body: "json",
      scope: "guardrails.create",
      organisationScope: "organisation_guardrails.create",
    },
    {
      method: "GET",
      path: "/v1/guardrails",
      handler: "listGuardrails",
      auth: "api_key",
      scope: "guardrails.list",
      organisationScope: "organisation_guardrails.list",
    },
    {
      method: "GET",
      path: "/v1/guardrails/:id/versions",
      handler: "listGuardrailVersions",
      auth: "api_key",
      scope: "guardrails.read",
      organisationScope: "organisation_guardrails.read",
    },
    {
      method: "GET",
      path: "/v1/guardrails/:id",
      handler: "getGuardrail",
      auth: "api_key",
      scope: "guardrails.read",
      organisationScope: "organisation_guardrails.read",
    },
    {
      method: "PUT",
      path: "/v1/guardrails/:id",
      handler: "updateGuardrail",
      auth: "api_key",
      body: "json",
      scope: "guardrails.update",
      organisationScope: "organisation_guardrails.update",
    },
    {
      method: "DELETE",
      path: "/v1/guardrails/:id",
      handler: "deleteGuardrail",
      auth: "api_key",
      scope: "guardrails.delete",
      organisationScope: "organisation_guardrails.delete",
    },
  ],
};
