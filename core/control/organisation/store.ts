import { ConditionFailedError, type Records } from "../../store/ports.ts";
import { Conflict, Invalid, NotFound } from "../errors.ts";
import type { GuardrailRefInput } from "./schemas.ts";
import { type Resource, ResourceStore } from "../resource-store.ts";

/**
 * The organisation record: pk `ORG#<id>`, sk `ORG`, written by bootstrap and changed with single-item
 * conditional writes on its `version` (absent on records bootstrap wrote before versions: read as 0).
 * It holds the organisation settings, its default guardrails and the workspaces exempt from them.
 * The admin API's request schemas live in organisation/schemas.ts: the data plane reads this record on every
 * cold start path and must not build them.
 */

export interface GuardrailRef {
  /** Always set since references are checked; null only in references stored before that (a slug then). */
  id: string | null;
  slug: string | null;
}

export interface OrganisationSettings {
  /** Days, 1..365. */
  user_api_key_rotation_period?: number | null;
  user_api_key_auto_create?: boolean;
  default_workspace_user_api_key_auto_create?: boolean;
  /** Absent: the date rule (BLOCK_INLINE_CONFIG_DEFAULT_FROM) decides. */
  block_inline_config?: boolean | null;
  /** Read by core/observe/exports/log-exports.ts deniedFields. */
  log_export_denied_fields?: string[] | null;
}

export type GuardrailPhase = "input_guardrails" | "output_guardrails";

export interface OrganisationRecord {
  id: string;
  name: string;
  /** Unix seconds (bootstrap); ISO strings are accepted too. */
  createdAt: number | string;
  version?: number;
  settings?: OrganisationSettings;
  defaults?: Partial<Record<GuardrailPhase, GuardrailRef[]>>;
  exclusions?: Partial<Record<GuardrailPhase, string[]>>;
  updatedAt?: number;
}

/** Spec 5.5: `block_inline_config` is on by default for organisations created on or after this day (UTC). */
export const BLOCK_INLINE_CONFIG_DEFAULT_FROM = Date.UTC(2026, 5, 19);

export const organisationKey = (organisationId: string) => ({ pk: `ORG#${organisationId}`, sk: "ORG" });

/** The organisation record, or undefined (for lookups on the data plane, which must not fail on it). */
export async function findOrganisation(
  records: Records,
  organisationId: string,
): Promise<OrganisationRecord | undefined> {
  const key = organisationKey(organisationId);
  const item = await records.get(key.pk, key.sk);
  if (!item) return undefined;
  const { pk, sk, gsi1pk, gsi1sk, ttl, ...rest } = item;
  return rest as unknown as OrganisationRecord;
}

/** The organisation record; NotFound when there is none. */
export async function getOrganisation(records: Records, organisationId: string): Promise<OrganisationRecord> {
  const organisation = await findOrganisation(records, organisationId);
  if (!organisation) throw new NotFound(`No organisation with id '${organisationId}'.`);
  return organisation;
}

/** Writes a change if the organisation still has the version that was read (else Conflict). */
export async function updateOrganisation(
  records: Records,
  current: OrganisationRecord,
  changes: Partial<OrganisationRecord>,
): Promise<OrganisationRecord> {
  const version = current.version ?? 0;
  const next: OrganisationRecord = {
    ...current,
    ...changes,
    version: version + 1,
    updatedAt: Math.floor(Date.now() / 1000),
  };
  try {
    await records.put({ ...organisationKey(current.id), ...next }, { equals: { version: current.version ?? null } });
  } catch (error) {
    if (error instanceof ConditionFailedError)
      throw new Conflict("The organisation was changed concurrently; read it again and retry.");
    throw error;
  }
  return next;
}

function createdAtMs(organisation: OrganisationRecord): number {
  const value = organisation.createdAt;
  return typeof value === "number" ? value * 1000 : Date.parse(value);
}

/** The organisation's own `block_inline_config` (env override not included): stored value, else the date rule. */
export function organisationBlocksInlineConfig(organisation: OrganisationRecord): boolean {
  const stored = organisation.settings?.block_inline_config;
  if (typeof stored === "boolean") return stored;
  return createdAtMs(organisation) >= BLOCK_INLINE_CONFIG_DEFAULT_FROM;
}

/** Settings as the API shows them: every field with its effective value. */
export function presentSettings(organisation: OrganisationRecord, forcedByEnv: boolean) {
  const settings = organisation.settings ?? {};
  return {
    object: "organisation_settings",
    organisation_id: organisation.id,
    user_api_key_rotation_period: settings.user_api_key_rotation_period ?? null,
    user_api_key_auto_create: settings.user_api_key_auto_create ?? false,
    default_workspace_user_api_key_auto_create: settings.default_workspace_user_api_key_auto_create ?? false,
    block_inline_config: forcedByEnv || organisationBlocksInlineConfig(organisation),
    block_inline_config_forced_by_env: forcedByEnv,
    log_export_denied_fields: settings.log_export_denied_fields ?? [],
  };
}

/** Guardrails are stored as kind GUARDRAIL, prefix `gr` (core/control/guardrails/store.ts). */
export const GUARDRAIL_KIND = "GUARDRAIL";
export const GUARDRAIL_ID_PREFIX = "gr";

/**
 * Resolves the guardrail references of one phase of the organisation defaults to `{id, slug}`, without
 * duplicates. Each must name an organisation-level guardrail: an unknown one, or one of a single workspace,
 * is Invalid naming its place (`input_guardrails[1]`).
 */
export async function resolveGuardrailRefs(
  records: Records,
  organisationId: string,
  phase: GuardrailPhase,
  refs: GuardrailRefInput[],
): Promise<GuardrailRef[]> {
  const store = new ResourceStore<Resource>(records, GUARDRAIL_KIND, GUARDRAIL_ID_PREFIX);
  const out: GuardrailRef[] = [];
  for (const [index, ref] of refs.entries()) {
    const value = typeof ref === "string" ? ref : "id" in ref ? ref.id : ref.slug;
    const param = `${phase}[${index}]`;
    const found = await store.get(organisationId, value);
    if (!found) throw new Invalid(`No guardrail '${value}'.`, { param, code: "guardrail_not_found" });
    if (found.workspaceId) {
      throw new Invalid(
        `Guardrail '${value}' belongs to workspace '${found.workspaceId}'; organisation defaults apply to every workspace, so they take organisation-level guardrails only.`,
        { param, code: "guardrail_not_organisation_level" },
      );
    }
    if (!out.some((known) => known.id === found.id)) out.push({ id: found.id, slug: found.slug ?? null });
  }
  return out;
}

export function presentDefaults(organisation: OrganisationRecord) {
  return {
    object: "organisation_defaults",
    organisation_id: organisation.id,
    input_guardrails: organisation.defaults?.input_guardrails ?? [],
    output_guardrails: organisation.defaults?.output_guardrails ?? [],
  };
}

/**
 * The organisation's default guardrails that apply to a workspace (spec 4.8): the defaults minus the phase's
 * exclusions. For the guardrail pipeline.
 */
export async function organisationGuardrailsFor(
  records: Records,
  organisationId: string,
  workspaceId: string | undefined,
  phase: GuardrailPhase,
): Promise<GuardrailRef[]> {
  const organisation = await findOrganisation(records, organisationId);
  return organisation ? defaultGuardrailsOf(organisation, workspaceId, phase) : [];
}

/** The organisation's default guardrails of a phase for a workspace: none when the workspace is excluded. */
export function defaultGuardrailsOf(
  organisation: Pick<OrganisationRecord, "defaults" | "exclusions">,
  workspaceId: string | undefined,
  phase: GuardrailPhase,
): GuardrailRef[] {
  if (workspaceId && organisation.exclusions?.[phase]?.includes(workspaceId)) return [];
  return organisation.defaults?.[phase] ?? [];
}
