/**
 * Every scope an API key (or JWT) may hold. Key creation validates `scopes[]` against this list (400 naming
 * the unknown scope); the route table's `scope` fields must all come from it (test/unit/auth/scopes.test.ts).
 * `*` (all scopes) is accepted too. Append new `<resource>.<action>` scopes here when adding routes.
 */
const crud = (resource: string, actions = ["create", "read", "list", "update", "delete"]) =>
  actions.map((action) => `${resource}.${action}`);

export const ALL_SCOPES: readonly string[] = Object.freeze([
  // Named by the spec (5.5).
  "logs.export",
  "logs.list",
  "logs.view",
  "logs.write",
  ...crud("virtual_keys"),
  "organisation_settings.read",
  "organisation_settings.update",
  "sso_settings.read",
  "sso_settings.update",
  ...crud("organisation_guardrails"),
  "organisation_exclusions.list",
  "organisation_exclusions.update",
  "guardrails.invoke",
  "agents.invoke",
  // Control-plane resources.
  ...crud("api_keys"),
  ...crud("workspaces"),
  ...crud("workspace_users"),
  ...crud("users"),
  ...crud("invites"),
  ...crud("scim_tokens", ["create", "list", "delete"]),
  ...crud("scim_group_mappings", ["create", "read", "list", "delete"]),
  "scim_groups.list",
  ...crud("configs"),
  ...crud("integrations"),
  // Saving a secret reference (`env:`, `file:`, `secretsmanager:`, `ssm:`) as a provider credential: it reads
  // what the gateway process can read (core/control/credential-refs.ts).
  "secret_references.create",
  ...crud("providers"),
  ...crud("model_pricing"),
  ...crud("guardrails"),
  ...crud("prompts"),
  "prompts.publish",
  "prompts.share",
  ...crud("prompt_partials"),
  "prompt_partials.publish",
  "prompt_partials.share",
  ...crud("prompt_collections"),
  ...crud("labels"),
  ...crud("policies"),
  ...crud("mcp_integrations"),
  ...crud("mcp_servers"),
  ...crud("agent_integrations"),
  ...crud("deployments", ["create", "read", "list", "delete", "heartbeat"]),
  "audit_logs.list",
  "analytics.read",
  "analytics.view",
  "feedback.create",
  "feedback.update",
  "completions.write",
  "models.list",
  "batches.update",
]);

const KNOWN = new Set(ALL_SCOPES);

export const isKnownScope = (scope: string) => scope === "*" || KNOWN.has(scope);
