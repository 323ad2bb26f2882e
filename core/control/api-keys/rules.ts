import type { ApiKeyRecord } from "../../auth/api-key-records.ts";
import type { Principal } from "../../auth/principal.ts";
import { isKnownScope } from "../../auth/scope-list.ts";
import { firstMissingScope, isOrganisationWide } from "../../auth/scopes.ts";
import type { KeyFields } from "./schemas.ts";
import { Forbidden, Invalid } from "../errors.ts";

/**
 * API keys' rules and presentation (spec 2.11, 4.8, 5.5): rotation settings, scope grants, who sees which key,
 * and the public shape. The operations are in core/control/api-keys/service.ts.
 */

/** How long the previous secret keeps working after a rotation. */
export const ROTATION_OVERLAP_SECONDS = 600;

export const DAY = 86_400;

/** `weekly` -> 7, `monthly` -> 30, integers (or integer strings) 1..365. */
export function normaliseRotationPeriod(value: unknown, param: string): number {
  if (value === "weekly") return 7;
  if (value === "monthly") return 30;
  const days = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof days !== "number" || !Number.isInteger(days) || days < 1 || days > 365) {
    throw new Invalid(`'${param}' must be 'weekly', 'monthly' or an integer number of days from 1 to 365.`, {
      param,
      code: "invalid_rotation_period",
    });
  }
  return days;
}

/** The last second of year 9999: later instants have no 4-digit ISO 8601 form (and 1e308 none at all). */
export const LATEST_UNIX_SECONDS = 253_402_300_799;

/** ISO date-time or Unix seconds (milliseconds are recognised) -> Unix seconds, up to the year 9999. */
export function toUnixSeconds(value: unknown, param: string): number {
  let seconds: number | undefined;
  if (typeof value === "number" && Number.isFinite(value)) seconds = Math.floor(value > 1e12 ? value / 1000 : value);
  else if (typeof value === "string" && value.trim() !== "") {
    const parsed = Date.parse(value);
    if (!Number.isNaN(parsed)) seconds = Math.floor(parsed / 1000);
  }
  if (seconds === undefined || seconds < 0 || seconds > LATEST_UNIX_SECONDS)
    throw new Invalid(`'${param}' must be an ISO 8601 date-time or Unix seconds, between 1970 and the end of 9999.`, {
      param,
      code: "invalid_value",
    });
  return seconds;
}

export function validateScopes(scopes: string[], creator: Principal): string[] {
  for (const [index, scope] of scopes.entries()) {
    if (!isKnownScope(scope))
      throw new Invalid(`Unknown scope '${scope}'. docs/control-plane.md lists the scopes (core/auth/scope-list.ts).`, {
        param: `scopes[${index}]`,
        code: "invalid_scope",
      });
  }
  // Nobody grants more than they hold, whatever the type of their key (only `*` holders may grant `*`).
  const missing = firstMissingScope(creator, scopes);
  if (missing)
    throw new Forbidden(`You cannot grant the scope '${missing}', which your own key lacks.`, {
      code: "scope_escalation",
    });
  return [...new Set(scopes)];
}

/**
 * Rotation settings of a create or update: `rotation_period` xor `rotation_period_days`, `next_rotation_at`
 * (refused when the organisation enforces rotation for this kind of key), computed when absent.
 */
export function rotationSettings(
  body: KeyFields,
  options: { enforcedDays?: number; current?: ApiKeyRecord; now: number },
): Pick<ApiKeyRecord, "rotationPeriodDays" | "nextRotationAt"> {
  const hasPeriod = body.rotation_period != null;
  const hasDays = body.rotation_period_days != null;
  if (hasPeriod && hasDays) {
    throw new Invalid("Send either 'rotation_period' or 'rotation_period_days', not both.", {
      param: "rotation_period_days",
      code: "mutually_exclusive",
    });
  }
  if (body.next_rotation_at != null && options.enforcedDays !== undefined) {
    throw new Invalid(
      "'next_rotation_at' cannot be set by hand: the organisation enforces key rotation (user_api_key_rotation_period).",
      { param: "next_rotation_at", code: "rotation_enforced" },
    );
  }
  let days = options.current?.rotationPeriodDays ?? options.enforcedDays;
  if (hasPeriod) days = normaliseRotationPeriod(body.rotation_period, "rotation_period");
  if (hasDays) days = normaliseRotationPeriod(body.rotation_period_days, "rotation_period_days");
  if (options.enforcedDays !== undefined && days !== undefined && days > options.enforcedDays) {
    throw new Invalid(`The organisation requires rotation at least every ${options.enforcedDays} days.`, {
      param: hasDays ? "rotation_period_days" : "rotation_period",
      code: "rotation_enforced",
    });
  }
  let next = options.current?.nextRotationAt;
  if (body.next_rotation_at != null) {
    next = toUnixSeconds(body.next_rotation_at, "next_rotation_at");
    if (next <= options.now)
      throw new Invalid("'next_rotation_at' must be in the future.", {
        param: "next_rotation_at",
        code: "invalid_value",
      });
  } else if (days !== undefined && (hasPeriod || hasDays || next === undefined)) {
    const from = options.current?.lastRotatedAt ?? options.current?.createdAt ?? options.now;
    next = Math.max(from + days * DAY, options.now);
  }
  return { rotationPeriodDays: days, nextRotationAt: next };
}

/** May the caller see this key? Organisation-wide callers all; others their workspace's workspace keys. */
export function canSee(principal: Principal, key: ApiKeyRecord): boolean {
  if (isOrganisationWide(principal)) return true;
  return key.keyType === "workspace" && key.workspaceId !== undefined && key.workspaceId === principal.workspaceId;
}

/** Null for an absent time, and for one no date can show (stored before dates were validated). */
const iso = (seconds: number | undefined) =>
  seconds === undefined || !(Math.abs(seconds) <= LATEST_UNIX_SECONDS) ? null : new Date(seconds * 1000).toISOString();

/** The public shape (portkey-ai `ApiKeysGetResponse`): never the secret, only its masked hint in `key`. */
export function presentKey(key: ApiKeyRecord) {
  return {
    id: key.id,
    object: "api-key",
    name: key.name,
    description: key.description ?? null,
    type: `${key.keyType}-${key.keySubType}`,
    key_type: key.keyType,
    sub_type: key.keySubType,
    key: key.secretHint,
    organisation_id: key.organisationId,
    workspace_id: key.workspaceId ?? null,
    user_id: key.userId ?? null,
    status: key.status,
    scopes: key.scopes,
    defaults: key.defaults ?? null,
    rotation_period_days: key.rotationPeriodDays ?? null,
    next_rotation_at: iso(key.nextRotationAt),
    last_rotated_at: iso(key.lastRotatedAt),
    expires_at: iso(key.expiresAt),
    created_at: iso(key.createdAt),
    last_updated_at: iso(key.updatedAt),
  };
}
