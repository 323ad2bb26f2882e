import { createHash, timingSafeEqual } from "node:crypto";

/**
 * PKCE (RFC 7636) with S256 only, as OAuth 2.1 and the MCP authorization spec require. Verifiers and challenges
 * are 43..128 characters of the unreserved set; an S256 challenge is exactly 43 (base64url of a sha256).
 */

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
const S256_CHALLENGE = /^[A-Za-z0-9\-_]{43}$/;

export const isCodeVerifier = (value: string) => VERIFIER.test(value);
export const isS256Challenge = (value: string) => S256_CHALLENGE.test(value);

export const s256Challenge = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

/** Whether `verifier` is well formed and hashes to `challenge` (compared in constant time). */
export function verifyPkce(verifier: string, challenge: string): boolean {
  if (!isCodeVerifier(verifier) || !isS256Challenge(challenge)) return false;
  const expected = Buffer.from(challenge);
  const actual = Buffer.from(s256Challenge(verifier));
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
