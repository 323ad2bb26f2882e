import { randomBytes } from "node:crypto";
import { sha256Hex } from "../../../util/ids.ts";
import { ConditionFailedError, type Records } from "../../../store/ports.ts";
import type { GrantSubject } from "./grant-subject.ts";

/**
 * Access and refresh tokens: opaque, 256-bit, prefixed (`gwoat_` / `gwort_`), only their sha256 stored with the
 * grant they carry (pk `OAUTHAT#<hash>` / `OAUTHRT#<hash>`, `ttl` at expiry). Every token belongs to a family:
 * the tokens one authorization code started, through every refresh. Revoking the family (a replayed code, a
 * reused refresh token, an explicit revocation) ends all of them at once: each use checks the family.
 */

export const ACCESS_TOKEN_PREFIX = "gwoat_";
const REFRESH_TOKEN_PREFIX = "gwort_";

export interface TokenGrant {
  clientId: string;
  scope: string;
  /** The audience: the resource URL the grant was made for. */
  resource?: string;
  serverId?: string;
  subject: GrantSubject;
  familyId: string;
}

export interface StoredToken extends TokenGrant {
  kind: "access" | "refresh";
  issuedAt: number;
  expiresAt: number;
  /** Refresh tokens: set once used, so a second use is recognised as reuse. */
  rotated?: boolean;
}

interface TokenFamily {
  clientId: string;
  revoked?: boolean;
}

const tokenKey = (token: string) =>
  token.startsWith(ACCESS_TOKEN_PREFIX)
    ? { pk: `OAUTHAT#${sha256Hex(token)}`, sk: "OAUTHAT" }
    : { pk: `OAUTHRT#${sha256Hex(token)}`, sk: "OAUTHRT" };
const familyKey = (familyId: string) => ({ pk: `OAUTHFAM#${familyId}`, sk: "OAUTHFAM" });

export interface IssuedTokens {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

/** Issues an access token (and a refresh token when `refresh`) in the grant's family. */
export async function issueTokens(
  records: Records,
  grant: TokenGrant,
  lifetimes: { accessSeconds: number; refreshSeconds: number; refresh: boolean },
): Promise<IssuedTokens> {
  const now = Math.floor(Date.now() / 1000);
  const family = familyKey(grant.familyId);
  const familyTtl = now + Math.max(lifetimes.accessSeconds, lifetimes.refresh ? lifetimes.refreshSeconds : 0);
  // Conditional writes only: a revocation racing this issue (a replayed code) must never be overwritten.
  const existing = await records.get(family.pk, family.sk);
  if (existing?.revoked) throw new FamilyRevoked();
  try {
    if (!existing) {
      await records.put({ ...family, clientId: grant.clientId, revoked: false, ttl: familyTtl }, { exists: false });
    } else if ((existing.ttl as number) < familyTtl) {
      await records.update(family.pk, family.sk, { set: { ttl: familyTtl } }, { equals: { revoked: false } });
    }
  } catch (error) {
    if (error instanceof ConditionFailedError) throw new FamilyRevoked();
    throw error;
  }
  const stored = Object.fromEntries(Object.entries(grant).filter(([, value]) => value !== undefined));
  const access = `${ACCESS_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  const accessExpires = now + lifetimes.accessSeconds;
  await records.put(
    { ...tokenKey(access), ...stored, kind: "access", issuedAt: now, expiresAt: accessExpires, ttl: accessExpires },
    { exists: false },
  );
  const issued: IssuedTokens = {
    access_token: access,
    token_type: "Bearer",
    expires_in: lifetimes.accessSeconds,
    scope: grant.scope,
  };
  if (lifetimes.refresh) {
    const refresh = `${REFRESH_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
    const refreshExpires = now + lifetimes.refreshSeconds;
    await records.put(
      {
        ...tokenKey(refresh),
        ...stored,
        kind: "refresh",
        issuedAt: now,
        expiresAt: refreshExpires,
        ttl: refreshExpires,
      },
      { exists: false },
    );
    issued.refresh_token = refresh;
  }
  return issued;
}

export class FamilyRevoked extends Error {}

export async function revokeFamily(records: Records, familyId: string): Promise<void> {
  const key = familyKey(familyId);
  const ttl = Math.floor(Date.now() / 1000) + 365 * 86_400;
  await records.put({ ...key, revoked: true, ttl });
}

async function familyRevoked(records: Records, familyId: string): Promise<boolean> {
  const key = familyKey(familyId);
  const family = (await records.get(key.pk, key.sk)) as unknown as TokenFamily | undefined;
  return !family || family.revoked === true;
}

/** A live token (known, unexpired, family not revoked), or undefined. */
export async function findLiveToken(records: Records, token: string): Promise<StoredToken | undefined> {
  if (token.length > 200 || !/^gwo[ar]t_[A-Za-z0-9_-]+$/.test(token)) return undefined;
  const key = tokenKey(token);
  const item = (await records.get(key.pk, key.sk)) as unknown as StoredToken | undefined;
  // A rotated refresh token is spent: no longer live (its reuse is handled by claimRefreshToken).
  if (!item || item.expiresAt <= Date.now() / 1000 || item.rotated) return undefined;
  if (await familyRevoked(records, item.familyId)) return undefined;
  return item;
}

export type RefreshClaim =
  | { outcome: "claimed"; token: StoredToken }
  | { outcome: "reused"; token: StoredToken }
  | { outcome: "unknown" };

/**
 * Uses a refresh token once (rotation): the first use claims it; any later use is reuse of a rotated token,
 * which the caller answers by revoking the family (OAuth 2.1 section 4.3.1).
 */
export async function claimRefreshToken(records: Records, token: string): Promise<RefreshClaim> {
  if (!token.startsWith(REFRESH_TOKEN_PREFIX) || token.length > 200) return { outcome: "unknown" };
  const key = tokenKey(token);
  const item = (await records.get(key.pk, key.sk)) as unknown as StoredToken | undefined;
  if (!item || item.expiresAt <= Date.now() / 1000) return { outcome: "unknown" };
  if (item.rotated) return { outcome: "reused", token: item };
  if (await familyRevoked(records, item.familyId)) return { outcome: "unknown" };
  try {
    await records.update(key.pk, key.sk, { set: { rotated: true } }, { equals: { rotated: null } });
  } catch (error) {
    if (error instanceof ConditionFailedError) return { outcome: "reused", token: item };
    throw error;
  }
  return { outcome: "claimed", token: item };
}

/** Ends one access token now. */
export async function deleteToken(records: Records, token: string): Promise<void> {
  const key = tokenKey(token);
  await records.delete(key.pk, key.sk);
}
