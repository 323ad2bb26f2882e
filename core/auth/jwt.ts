import type { JWTPayload, JWTVerifyGetKey } from "jose";
import type { Settings } from "../config/settings.ts";
import { findMembership, findUserByEmail, findWorkspace } from "../control/directory.ts";
import { DEPLOYMENT_KEY } from "../control/organisation/bootstrap.ts";
import { HttpError, forbidden } from "../http/errors.ts";
import { sha256Hex } from "../util/ids.ts";
import { type TrustedHosts, checkCustomHost } from "../security/custom-host.ts";
import { guardedFetch } from "../security/guarded-dispatcher.ts";
import type { Records } from "../store/ports.ts";
import { TtlCache } from "../util/ttl-cache.ts";
import { principalBytes } from "./api-key-authenticator.ts";
import type { OrganisationRole, Principal } from "./principal.ts";

/**
 * JWT authentication (spec 5.4): `Authorization: Bearer <jwt>` (only when no x-gateway-api-key is sent),
 * verified against a JWKS (GATEWAY_JWT_JWKS inline JSON, or GATEWAY_JWT_JWKS_URL fetched through the SSRF
 * guard), with optional issuer and audience checks and a clock tolerance.
 *
 * Claims:
 * - `email` (required): the user; must be a user of the organisation (403 otherwise);
 * - `workspace_id` (alias `portkey_workspace`, `workspace`): the workspace (id or slug) the token acts in;
 *   the user must be a member of it (403). Without it only organisation owners/admins are accepted;
 * - `scope` (space-separated) or `scopes` (array): the scopes, e.g. `agents.invoke guardrails.invoke`;
 * - `organisation_id` (alias `org_id`): when present it must be this deployment's organisation.
 * Verified principals are cached per token for up to 60 seconds (never past the token's `exp`).
 */

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const CACHE_MS = 60_000;
const MAX_CACHE_ENTRIES = 5_000;

export const looksLikeJwt = (token: string) => JWT_SHAPE.test(token) && token.startsWith("eyJ");

export class JwtAuthenticator {
  readonly enabled: boolean;
  private readonly settings: Settings;
  private readonly records: Records;
  private readonly trusted: TrustedHosts;
  private keySet: Promise<JWTVerifyGetKey> | undefined;
  private organisationId: Promise<string | undefined> | undefined;
  /** Principals by the hash of the token (never the token itself). */
  private readonly cache = new TtlCache<string, Principal>({
    ttlMs: CACHE_MS,
    maxEntries: MAX_CACHE_ENTRIES,
    sizeOf: principalBytes,
  });

  constructor(settings: Settings, records: Records, trusted: TrustedHosts) {
    this.settings = settings;
    this.records = records;
    this.trusted = trusted;
    this.enabled = Boolean(settings.GATEWAY_JWT_JWKS || settings.GATEWAY_JWT_JWKS_URL);
  }

  async authenticate(token: string): Promise<Principal> {
    const hash = sha256Hex(token);
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const payload = await this.verify(token);
    const principal = await this.principalFor(payload);
    const untilExpiry = typeof payload.exp === "number" ? payload.exp * 1000 - Date.now() : CACHE_MS;
    if (untilExpiry > 0) this.cache.set(hash, principal, Math.min(CACHE_MS, untilExpiry));
    return principal;
  }

  private async verify(token: string): Promise<JWTPayload> {
    // jose is loaded by the first JWT: most deployments authenticate with API keys only.
    const { errors, jwtVerify } = await import("jose");
    let keySet: JWTVerifyGetKey;
    try {
      keySet = await this.getKeySet();
    } catch (error) {
      throw jwksUnavailable(error);
    }
    // Failures of the key set itself (unreachable, timed out, not 200, malformed) say nothing about the token:
    // 503, so clients retry. Only "no key for this token" and unsupported algorithms are the token's fault.
    const tokenFaults = [errors.JWKSNoMatchingKey, errors.JWKSMultipleMatchingKeys, errors.JOSENotSupported];
    const guardedKeySet: JWTVerifyGetKey = async (header, input) => {
      try {
        return await keySet(header, input);
      } catch (error) {
        if (tokenFaults.some((fault) => error instanceof fault)) throw error;
        throw jwksUnavailable(error);
      }
    };
    try {
      const { payload } = await jwtVerify(token, guardedKeySet, {
        issuer: this.settings.GATEWAY_JWT_ISSUER || undefined,
        audience: this.settings.GATEWAY_JWT_AUDIENCE || undefined,
        clockTolerance: this.settings.GATEWAY_JWT_CLOCK_TOLERANCE_SECONDS,
        algorithms: ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"],
      });
      return payload;
    } catch (error) {
      if (error instanceof HttpError) throw error;
      if (error instanceof errors.JWTExpired) throw invalidToken("The JWT has expired.");
      if (error instanceof errors.JWTClaimValidationFailed)
        throw invalidToken(`The JWT's '${error.claim}' claim is not accepted.`);
      if (error instanceof errors.JOSEError) throw invalidToken("The JWT could not be verified.");
      throw error;
    }
  }

  private getKeySet(): Promise<JWTVerifyGetKey> {
    this.keySet ??= (async () => {
      const { createLocalJWKSet, createRemoteJWKSet, customFetch } = await import("jose");
      if (this.settings.GATEWAY_JWT_JWKS) {
        return createLocalJWKSet(JSON.parse(this.settings.GATEWAY_JWT_JWKS));
      }
      const url = await checkCustomHost(this.settings.GATEWAY_JWT_JWKS_URL!, this.trusted, "GATEWAY_JWT_JWKS_URL");
      const fetchGuarded = guardedFetch(this.trusted);
      return createRemoteJWKSet(url, {
        [customFetch]: (input: string | URL | Request, init?: RequestInit) =>
          fetchGuarded(input, { ...init, redirect: "manual" }),
      });
    })().catch((error) => {
      this.keySet = undefined;
      throw error;
    });
    return this.keySet;
  }

  private deploymentOrganisation(): Promise<string | undefined> {
    this.organisationId ??= this.records
      .get(DEPLOYMENT_KEY.pk, DEPLOYMENT_KEY.sk)
      .then((item) => item?.organisationId as string | undefined);
    return this.organisationId;
  }

  private async principalFor(payload: JWTPayload): Promise<Principal> {
    const organisationId = await this.deploymentOrganisation();
    if (!organisationId) throw forbidden("This deployment has no organisation yet.", "jwt_forbidden");
    const claimedOrg = stringClaim(payload, "organisation_id", "org_id");
    if (claimedOrg && claimedOrg !== organisationId)
      throw forbidden("The JWT names another organisation.", "jwt_forbidden");
    const email = stringClaim(payload, "email");
    if (!email) throw invalidToken("The JWT has no 'email' claim.");
    const user = await findUserByEmail(this.records, organisationId, email);
    if (!user) throw forbidden(`No user '${email}' in this organisation.`, "user_not_found");
    // Deprovisioned (SCIM `active: false`): no access, whatever the token still says.
    if (user.active === false) throw forbidden(`The user '${email}' is deactivated.`, "user_deactivated");
    const organisationRole = (user.role as OrganisationRole | undefined) ?? "member";
    const scopes = scopesOf(payload);

    const workspaceClaim = stringClaim(payload, "workspace_id", "portkey_workspace", "workspace");
    if (!workspaceClaim) {
      if (organisationRole !== "owner" && organisationRole !== "admin") {
        throw forbidden(
          "The JWT must name a workspace ('workspace_id' claim) the user is a member of.",
          "workspace_required",
        );
      }
      return { kind: "jwt", organisationId, userId: user.id, userEmail: email, organisationRole, scopes };
    }
    const workspace = await findWorkspace(this.records, organisationId, workspaceClaim);
    const membership = workspace && (await findMembership(this.records, workspace.id, user.id));
    // One answer for unknown workspaces and other people's: a token must not tell which workspaces exist.
    if (!workspace || !membership)
      throw forbidden(`User '${email}' is not a member of workspace '${workspaceClaim}'.`, "not_a_member");
    return {
      kind: "jwt",
      organisationId,
      workspaceId: workspace.id,
      userId: user.id,
      userEmail: email,
      organisationRole,
      workspaceRole: membership.role,
      scopes,
    };
  }
}

function stringClaim(payload: JWTPayload, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = payload[name];
    if (typeof value === "string" && value.trim() !== "") return value.trim();
  }
  return undefined;
}

function scopesOf(payload: JWTPayload): string[] {
  const fromArray = Array.isArray(payload.scopes)
    ? payload.scopes.filter((scope): scope is string => typeof scope === "string")
    : [];
  const fromString = typeof payload.scope === "string" ? payload.scope.split(/\s+/).filter(Boolean) : [];
  return [...new Set([...fromArray, ...fromString])];
}

const invalidToken = (message: string) => new HttpError(401, message, { code: "invalid_jwt" });

/** The JWKS could not be read (or is misconfigured): the token cannot be judged, so 503 and retry, never 401. */
function jwksUnavailable(error: unknown): HttpError {
  console.error(`JWT: the JWKS is unavailable: ${(error as Error)?.message ?? String(error)}`);
  return new HttpError(503, "The JWT could not be verified now: the gateway's JWKS is unavailable. Retry later.", {
    type: "server_error",
    code: "jwks_unavailable",
    headers: { "retry-after": "5" },
  });
}
