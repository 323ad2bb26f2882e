import { randomBytes, timingSafeEqual } from "node:crypto";
import { sha256Hex } from "../../../util/ids.ts";
import { ConditionFailedError, type Records } from "../../../store/ports.ts";
import type { GrantSubject } from "./grant-subject.ts";

/**
 * An authorization request between the authorize page and the user's decision. It is checked once, at
 * `GET /oauth/authorize`, and kept server-side (pk `OAUTHREQ#<sha256(id)>`, ten minutes); the pages carry only
 * its random id and a CSRF token. The token changes when the subject is set (sign-in), and a consent bound to a
 * session is accepted only with that same session's cookie. The decision deletes the record conditionally, so a
 * request is decided once.
 */

export interface AuthorizationRequest {
  clientId: string;
  clientName?: string;
  redirectUri: string;
  codeChallenge: string;
  scope: string;
  state?: string;
  resource?: string;
  /** The MCP server the resource names, if it names one. */
  serverId?: string;
  serverName?: string;
  csrfHash: string;
  subject?: GrantSubject;
  /** sha256 of the session id that signed in, for consents made with a session cookie. */
  sessionHash?: string;
  /** What the consent page shows of who signed in. */
  subjectLabel?: string;
}

const REQUEST_TTL_SECONDS = 600;
const requestKey = (id: string) => ({ pk: `OAUTHREQ#${sha256Hex(id)}`, sk: "OAUTHREQ" });
const token = () => randomBytes(32).toString("base64url");

export async function createAuthorizationRequest(
  records: Records,
  request: Omit<AuthorizationRequest, "csrfHash">,
): Promise<{ id: string; csrf: string }> {
  const id = token();
  const csrf = token();
  const item = Object.fromEntries(Object.entries(request).filter(([, value]) => value !== undefined));
  const ttl = Math.floor(Date.now() / 1000) + REQUEST_TTL_SECONDS;
  await records.put({ ...requestKey(id), ...item, csrfHash: sha256Hex(csrf), ttl }, { exists: false });
  return { id, csrf };
}

/** The request `id` names when `csrf` is its current token; undefined otherwise (unknown, expired, forged). */
export async function findAuthorizationRequest(
  records: Records,
  id: string,
  csrf: string,
): Promise<AuthorizationRequest | undefined> {
  if (!id || !csrf || id.length > 100 || csrf.length > 100) return undefined;
  const key = requestKey(id);
  const item = await records.get(key.pk, key.sk);
  if (!item) return undefined;
  const expected = Buffer.from(item.csrfHash as string);
  const actual = Buffer.from(sha256Hex(csrf));
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
  return item as unknown as AuthorizationRequest;
}

/** Records who signed in; answers the new CSRF token the consent page carries. */
export async function setSubject(
  records: Records,
  id: string,
  subject: { subject: GrantSubject; sessionHash?: string; subjectLabel: string },
): Promise<string> {
  const csrf = token();
  const key = requestKey(id);
  await records.update(key.pk, key.sk, { set: { ...subject, csrfHash: sha256Hex(csrf) } }, { exists: true });
  return csrf;
}

/** A new CSRF token for the request (after a failed sign-in), the old one no longer valid. */
export async function renewCsrf(records: Records, id: string): Promise<string> {
  const csrf = token();
  const key = requestKey(id);
  await records.update(key.pk, key.sk, { set: { csrfHash: sha256Hex(csrf) } }, { exists: true });
  return csrf;
}

/** Takes the request for its decision: true once, false for every later (or concurrent) try. */
export async function claimAuthorizationRequest(records: Records, id: string): Promise<boolean> {
  const key = requestKey(id);
  try {
    await records.delete(key.pk, key.sk, { exists: true });
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}
