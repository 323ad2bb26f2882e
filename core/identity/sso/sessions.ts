import { createHash, timingSafeEqual } from "node:crypto";
import type { OrganisationRole, Principal } from "../../auth/principal.ts";
import { findUser } from "../../control/directory.ts";
import { newSecret, sha256Hex } from "../../util/ids.ts";
import type { Records } from "../../store/ports.ts";

/**
 * Console sessions made by SSO sign-in. The session id is a 256-bit secret sent only in an HttpOnly cookie;
 * Records keep its sha256 (pk `SESSION#<hash>`) with the organisation, the user and an expiry (`ttl`).
 * A session acts as its user with the user's current organisation role: owners and admins reach the whole
 * organisation with every scope; members hold no control-plane scopes (they can still ask who they are).
 *
 * CSRF: cookies ride along on cross-site requests, so a state-changing request authenticated by a session must
 * carry `x-gateway-csrf` equal to the session's CSRF token (returned at login in the readable `gateway_csrf`
 * cookie and by GET /v1/auth/self) or an `Origin` equal to the gateway's own.
 */

export const SESSION_COOKIE = "gateway_session";
export const CSRF_COOKIE = "gateway_csrf";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export interface SessionRecord {
  organisationId: string;
  userId: string;
  expiresAt: number;
}

const sessionKey = (id: string) => ({ pk: `SESSION#${sha256Hex(id)}`, sk: "SESSION" });

/** The CSRF token of a session: derived from its secret id, so it needs no storage and proves the cookie. */
export const csrfTokenOf = (sessionId: string) => createHash("sha256").update(`csrf:${sessionId}`).digest("base64url");

export async function createSession(
  records: Records,
  session: { organisationId: string; userId: string },
  ttlSeconds: number,
): Promise<{ id: string; csrfToken: string; expiresAt: number }> {
  const id = newSecret("gws");
  const expiresAt = Math.floor(Date.now() / 1000) + ttlSeconds;
  await records.put({ ...sessionKey(id), ...session, expiresAt, ttl: expiresAt }, { exists: false });
  return { id, csrfToken: csrfTokenOf(id), expiresAt };
}

export async function endSession(records: Records, id: string): Promise<void> {
  const key = sessionKey(id);
  await records.delete(key.pk, key.sk);
}

/** A cookie's value from a `Cookie` header. */
export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** What authentication needs to know of the request beyond its headers (CSRF checks). */
export interface SessionRequest {
  method: string;
  /** The gateway's own origin (GATEWAY_PUBLIC_URL, else the request URL's). */
  origin: string;
  headers: { get(name: string): string | null };
}

export class SessionError extends Error {
  readonly code: "invalid_session" | "csrf_failed";
  constructor(message: string, code: "invalid_session" | "csrf_failed") {
    super(message);
    this.code = code;
  }
}

/** The principal of a session cookie; SessionError when the session is unknown, expired or fails CSRF. */
export async function authenticateSession(
  records: Records,
  sessionId: string,
  request: SessionRequest,
): Promise<Principal> {
  if (!SAFE_METHODS.has(request.method.toUpperCase()) && !passesCsrf(sessionId, request)) {
    throw new SessionError(
      "Cross-site request refused: send the x-gateway-csrf header with the session's CSRF token.",
      "csrf_failed",
    );
  }
  const key = sessionKey(sessionId);
  const item = await records.get(key.pk, key.sk);
  const session = item as unknown as SessionRecord | undefined;
  if (!session || session.expiresAt <= Date.now() / 1000) {
    throw new SessionError("The session has ended or is unknown. Sign in again.", "invalid_session");
  }
  const user = await findUser(records, session.organisationId, session.userId);
  if (!user) throw new SessionError("The session's user no longer exists.", "invalid_session");
  // Deprovisioned (SCIM `active: false`) since the session began: it ends now.
  if (user.active === false) throw new SessionError("The session's user is deactivated.", "invalid_session");
  const organisationRole = (user.role as OrganisationRole | undefined) ?? "member";
  const elevated = organisationRole === "owner" || organisationRole === "admin";
  return {
    kind: "session",
    organisationId: session.organisationId,
    userId: user.id,
    userEmail: user.email,
    organisationRole,
    scopes: elevated ? ["*"] : [],
  };
}

/** The request carries the session's CSRF token or comes from the gateway's own origin. */
export function passesCsrf(sessionId: string, request: SessionRequest): boolean {
  const sent = request.headers.get("x-gateway-csrf") ?? request.headers.get("x-portkey-csrf");
  if (sent) {
    const expected = Buffer.from(csrfTokenOf(sessionId));
    const given = Buffer.from(sent);
    if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
  }
  const origin = request.headers.get("origin");
  return origin !== null && origin === request.origin;
}

/** Set-Cookie values for a new session: `Secure` is dropped only for a gateway at http://localhost. */
export function sessionCookies(session: { id: string; csrfToken: string }, gatewayUrl: URL, maxAge: number): string[] {
  const secure = gatewayUrl.protocol === "http:" && gatewayUrl.hostname === "localhost" ? "" : "; Secure";
  return [
    `${SESSION_COOKIE}=${session.id}; HttpOnly${secure}; SameSite=Lax; Path=/; Max-Age=${maxAge}`,
    // Readable by the console's scripts, which echo it in x-gateway-csrf (double submit).
    `${CSRF_COOKIE}=${session.csrfToken}${secure}; SameSite=Lax; Path=/; Max-Age=${maxAge}`,
  ];
}

export function clearedCookies(gatewayUrl: URL): string[] {
  const secure = gatewayUrl.protocol === "http:" && gatewayUrl.hostname === "localhost" ? "" : "; Secure";
  return [
    `${SESSION_COOKIE}=; HttpOnly${secure}; SameSite=Lax; Path=/; Max-Age=0`,
    `${CSRF_COOKIE}=${secure}; SameSite=Lax; Path=/; Max-Age=0`,
  ];
}
