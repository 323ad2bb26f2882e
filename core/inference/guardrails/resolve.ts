import type { Principal } from "../../auth/principal.ts";
import { openCheckSecrets } from "../../control/guardrails/secrets.ts";
import {
  type GuardrailResource,
  definitionOf,
  guardrailStore,
  onGuardrailsChanged,
} from "../../control/guardrails/store.ts";
import {
  type GuardrailRef,
  type OrganisationRecord,
  defaultGuardrailsOf,
  findOrganisation,
} from "../../control/organisation/store.ts";
import { boundWorkspace } from "../../control/credentials/credentials.ts";
import type { RequestContext } from "../../services.ts";
import { HttpError } from "../../http/errors.ts";
import type { InheritedSettings } from "../routing/config.ts";
import type { Records, Secrets } from "../../store/ports.ts";
import { TtlCache } from "../../util/ttl-cache.ts";
import type { GuardrailDefinition, GuardrailPhase } from "./types.ts";

/**
 * Which guardrails a request runs (pipeline steps 4 and 7): the organisation's defaults for the caller's
 * workspace (minus the workspaces excluded from them), then the config's, root first and then the answering
 * target's additions. Saved guardrails and the organisation's defaults are read through short caches
 * (CACHE_MS, dropped for an organisation when this process changes one of its guardrails), so a warm request
 * without guardrails reads nothing from the store. A saved guardrail's secret parameters are stored sealed
 * (core/control/guardrails/secrets.ts): they are opened once per guardrail version, and the definition the
 * runner takes is kept per version. This module is on the data plane's init path: it loads neither the runner
 * nor the checks.
 */

export const CACHE_MS = 5_000;

type Defaults = Pick<OrganisationRecord, "defaults" | "exclusions">;

/**
 * A saved guardrail and the definition the runner takes, its secrets opened (the same object while the
 * guardrail's version is unchanged: the runner keeps parsed parameters per check).
 */
interface Saved {
  resource: GuardrailResource;
  definition: GuardrailDefinition;
}

interface Caches {
  /** The organisation's default guardrails and exclusions, by organisation id. */
  defaults: TtlCache<string, Promise<Defaults>>;
  /** Saved guardrails by `<organisation>:<id or slug>`; null when there is none. */
  saved: TtlCache<string, Promise<Saved | null>>;
  /** Definitions (secrets opened) by guardrail id, for the version they were made from. */
  definitions: TtlCache<string, { version: number; definition: Promise<GuardrailDefinition> }>;
  /** Defaults already warned about (`<organisation>:<id or slug>`): one warning per CACHE_MS, not per request. */
  warned: TtlCache<string, true>;
}

const cachesByRecords = new WeakMap<Records, Caches>();
const MAX_ENTRIES = 5_000;

function cachesOf(records: Records): Caches {
  let caches = cachesByRecords.get(records);
  if (!caches) {
    caches = {
      defaults: new TtlCache({ ttlMs: CACHE_MS, maxEntries: MAX_ENTRIES }),
      saved: new TtlCache({ ttlMs: CACHE_MS, maxEntries: MAX_ENTRIES }),
      // Kept until evicted: a new version replaces its guardrail's entry.
      definitions: new TtlCache({ ttlMs: Number.POSITIVE_INFINITY, maxEntries: MAX_ENTRIES }),
      warned: new TtlCache({ ttlMs: CACHE_MS, maxEntries: MAX_ENTRIES }),
    };
    cachesByRecords.set(records, caches);
    // Weakly held: the listener must not keep a closed store's caches alive.
    const held = new WeakRef(caches);
    onGuardrailsChanged((organisationId) => {
      const current = held.deref();
      if (!current) return;
      current.defaults.delete(organisationId);
      current.saved.deleteWhere((key) => key.startsWith(`${organisationId}:`));
    });
  }
  return caches;
}

/** A value cached as a promise (concurrent misses share one read); a failed read is not kept. */
function cached<T>(cache: TtlCache<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  const hit = cache.get(key);
  if (hit) return hit;
  const value = load().catch((error) => {
    cache.deleteIf(key, value);
    throw error;
  });
  cache.set(key, value);
  return value;
}

function organisationDefaults(records: Records, organisationId: string): Promise<Defaults> {
  return cached(cachesOf(records).defaults, organisationId, async () => {
    const organisation = await findOrganisation(records, organisationId);
    return { defaults: organisation?.defaults, exclusions: organisation?.exclusions };
  });
}

/** What reading saved guardrails takes: the records, and the secrets to open their sealed parameters. */
type GuardrailStores = { records: Records; secrets: Secrets };

function savedGuardrail(stores: GuardrailStores, organisationId: string, idOrSlug: string): Promise<Saved | null> {
  return cached(cachesOf(stores.records).saved, `${organisationId}:${idOrSlug}`, async () => {
    const resource = await guardrailStore(stores.records).get(organisationId, idOrSlug);
    return resource ? { resource, definition: await openedDefinition(stores, resource) } : null;
  });
}

/** The runner's definition of a stored guardrail, its secrets opened once per version. */
function openedDefinition(stores: GuardrailStores, resource: GuardrailResource): Promise<GuardrailDefinition> {
  const { definitions } = cachesOf(stores.records);
  const known = definitions.get(resource.id);
  if (known && known.version === resource.version) return known.definition;
  const definition = openCheckSecrets(stores.secrets, resource.checks).then((checks) => ({
    ...definitionOf(resource),
    checks,
  }));
  const entry = { version: resource.version, definition };
  definitions.set(resource.id, entry);
  // A failed opening is not kept: the next load tries again.
  definition.catch(() => definitions.deleteIf(resource.id, entry));
  return definition;
}

/** The organisation's default guardrails of a phase for the caller's workspace. */
async function defaultRefs(ctx: RequestContext, phase: GuardrailPhase): Promise<GuardrailRef[]> {
  const principal = ctx.principal;
  if (!principal) return [];
  const organisation = await organisationDefaults(ctx.services.stores.records, principal.organisationId);
  return defaultGuardrailsOf(organisation, principal.workspaceId, `${phase}_guardrails`);
}

// --- sub-requests ----------------------------------------------------------------------------------------------

/** Contexts of calls the checks make through the gateway (a model-graded check's model call): never guarded. */
const subRequests = new WeakSet<RequestContext>();

/** A context for a call made on behalf of a check: it runs no guardrails of its own (no recursion). */
export function guardrailFreeContext(ctx: RequestContext, changes: Partial<RequestContext> = {}): RequestContext {
  const sub: RequestContext = { ...ctx, ...changes };
  subRequests.add(sub);
  return sub;
}

// --- the two questions the pipeline asks -------------------------------------------------------------------

/**
 * Whether a request *may* have guardrails, without loading anything heavy: the settings carry some, or the
 * organisation has defaults for this workspace. One store read per organisation per CACHE_MS.
 */
export async function mayHaveGuardrails(
  ctx: RequestContext,
  settings: InheritedSettings | undefined,
): Promise<boolean> {
  if (subRequests.has(ctx)) return false;
  const own = settings?.guardrails;
  if (own && (own.input.length > 0 || own.output.length > 0)) return true;
  const principal = ctx.principal;
  if (!principal) return false;
  const organisation = await organisationDefaults(ctx.services.stores.records, principal.organisationId);
  return (
    defaultGuardrailsOf(organisation, principal.workspaceId, "input_guardrails").length > 0 ||
    defaultGuardrailsOf(organisation, principal.workspaceId, "output_guardrails").length > 0
  );
}

/**
 * The guardrails one request runs in one phase, in order: the organisation's defaults for the caller's
 * workspace (minus its exclusions), then the config's (root first, then the answering target's additions).
 * A guardrail named twice runs once. Archived guardrails do not run. A config's reference to a guardrail that
 * does not exist or that the caller's workspace may not use: HttpError 400 `guardrail_not_found` naming it;
 * a default whose guardrail no longer exists is skipped with a warning (the client did not name it).
 */
export async function guardrailsFor(
  ctx: RequestContext,
  settings: InheritedSettings | undefined,
  phase: GuardrailPhase,
): Promise<GuardrailDefinition[]> {
  if (subRequests.has(ctx)) return [];
  const entries = settings?.guardrails?.[phase] ?? [];
  const defaults = await defaultRefs(ctx, phase);
  if (entries.length === 0 && defaults.length === 0) return [];
  const principal = ctx.principal;
  const stores = ctx.services.stores;
  const loaded = await Promise.all([
    ...defaults.map(async (ref) => {
      const name = ref.id ?? ref.slug;
      const saved = name && principal ? await savedGuardrail(stores, principal.organisationId, name) : null;
      if (!saved || !mayUse(principal!, saved.resource, "default")) {
        warnOnce(stores.records, `${principal?.organisationId}:${name}`, () =>
          console.warn(
            `organisation default ${phase} guardrail '${name}' does not exist (for this workspace): skipped`,
          ),
        );
        return undefined;
      }
      return saved;
    }),
    ...entries.map(async (entry) => {
      if ("inline" in entry) return entry.inline;
      const saved = principal ? await savedGuardrail(stores, principal.organisationId, entry.ref) : null;
      if (!saved || !mayUse(principal!, saved.resource, "reference")) throw unknownGuardrail(entry.ref, entry.path);
      return saved;
    }),
  ]);
  const definitions: GuardrailDefinition[] = [];
  const seen = new Set<string>();
  for (const item of loaded) {
    if (!item) continue;
    if ("resource" in item) {
      if (item.resource.status === "archived" || seen.has(item.resource.id)) continue;
      seen.add(item.resource.id);
      definitions.push(item.definition);
    } else {
      definitions.push(item);
    }
  }
  return definitions;
}

/**
 * A saved guardrail the caller may run, by id or slug (through the cache): undefined when there is none, when
 * it is another workspace's (as if it did not exist), or when it is archived.
 */
export async function usableGuardrail(ctx: RequestContext, idOrSlug: string): Promise<GuardrailDefinition | undefined> {
  const principal = ctx.principal;
  if (!principal) return undefined;
  const saved = await savedGuardrail(ctx.services.stores, principal.organisationId, idOrSlug);
  if (!saved || !mayUse(principal, saved.resource, "reference") || saved.resource.status === "archived")
    return undefined;
  return saved.definition;
}

/**
 * Workspace-bound callers use their workspace's guardrails and organisation-level ones; another workspace's
 * is as if it did not exist. An organisation default runs for the workspace it belongs to, if it is one's.
 */
function mayUse(principal: Principal, guardrail: GuardrailResource, as: "default" | "reference"): boolean {
  if (!guardrail.workspaceId) return true;
  if (as === "default") return guardrail.workspaceId === principal.workspaceId;
  const bound = boundWorkspace(principal);
  return bound === undefined || bound === guardrail.workspaceId;
}

function warnOnce(records: Records, key: string, warn: () => void): void {
  const { warned } = cachesOf(records);
  if (warned.has(key)) return;
  warned.set(key, true);
  warn();
}

const unknownGuardrail = (ref: string, path: string) =>
  new HttpError(
    400,
    `Unknown guardrail '${ref}' (${path}): no guardrail with this id or slug exists that this key may use.`,
    { param: path, code: "guardrail_not_found" },
  );
