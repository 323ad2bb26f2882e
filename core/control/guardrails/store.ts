import type { CheckSpec, GuardrailActions, GuardrailDefinition } from "../../inference/guardrails/types.ts";
import type { Records } from "../../store/ports.ts";
import { GUARDRAIL_ID_PREFIX, GUARDRAIL_KIND } from "../organisation/store.ts";
import { type Resource, ResourceStore } from "../resource-store.ts";

/**
 * Saved guardrails (kind GUARDRAIL, ids `gr_...`): organisation-level (no workspaceId) or one workspace's.
 * Read by the control plane (core/control/guardrails/service.ts) and, through a short cache, by the
 * guardrail pipeline (core/inference/guardrails).
 */
export interface GuardrailResource extends Resource {
  name: string;
  checks: CheckSpec[];
  actions: GuardrailActions;
  status: "active" | "archived";
  createdBy?: string;
  /** Who made the last update (a user id or key id). */
  updatedBy?: string;
}

export const guardrailStore = (records: Records) =>
  new ResourceStore<GuardrailResource>(records, GUARDRAIL_KIND, GUARDRAIL_ID_PREFIX);

/** The stored guardrail as the runner takes it. */
export function definitionOf(resource: GuardrailResource): GuardrailDefinition {
  return {
    id: resource.id,
    slug: resource.slug,
    name: resource.name,
    version: resource.version,
    checks: resource.checks,
    actions: resource.actions,
  };
}

const changeListeners = new Set<(organisationId: string) => void>();

/** Called by whoever caches guardrails (the pipeline) to drop an organisation's entries when one changes here. */
export function onGuardrailsChanged(listener: (organisationId: string) => void): void {
  changeListeners.add(listener);
}

/** Called by the control plane after every create, update and delete of a guardrail. */
export function guardrailsChanged(organisationId: string): void {
  for (const listener of changeListeners) listener(organisationId);
}
