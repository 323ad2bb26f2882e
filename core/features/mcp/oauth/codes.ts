import { randomBytes } from "node:crypto";
import { newId, sha256Hex } from "../../../util/ids.ts";
import { ConditionFailedError, type Records } from "../../../store/ports.ts";
import type { GrantSubject } from "./grant-subject.ts";

/**
 * Authorization codes: 256-bit, only their sha256 stored (pk `OAUTHCODE#<hash>`), valid 60 seconds. A code names
 * the token family its exchange starts, so a replay (spec 5.5: codes are single-use) can revoke exactly the tokens
 * the first exchange issued. The record outlives the code by ten minutes to recognise replays.
 */

export const CODE_LIFETIME_SECONDS = 60;
const REPLAY_MEMORY_SECONDS = 600;

export interface AuthorizationCode {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  scope: string;
  resource?: string;
  serverId?: string;
  subject: GrantSubject;
  familyId: string;
  expiresAt: number;
  used?: boolean;
}

const codeKey = (code: string) => ({ pk: `OAUTHCODE#${sha256Hex(code)}`, sk: "OAUTHCODE" });

export async function issueCode(
  records: Records,
  grant: Omit<AuthorizationCode, "familyId" | "expiresAt" | "used">,
): Promise<{ code: string; familyId: string }> {
  const code = `gwoac_${randomBytes(32).toString("base64url")}`;
  const now = Math.floor(Date.now() / 1000);
  const familyId = newId("gwof");
  const stored = Object.fromEntries(Object.entries(grant).filter(([, value]) => value !== undefined));
  await records.put(
    {
      ...codeKey(code),
      ...stored,
      familyId,
      expiresAt: now + CODE_LIFETIME_SECONDS,
      ttl: now + CODE_LIFETIME_SECONDS + REPLAY_MEMORY_SECONDS,
    },
    { exists: false },
  );
  return { code, familyId };
}

export type CodeClaim =
  | { outcome: "claimed"; code: AuthorizationCode }
  | { outcome: "replayed"; code: AuthorizationCode }
  | { outcome: "unknown" };

/** Marks a code used, atomically: of two exchanges of one code, one claims it and the other sees a replay. */
export async function claimCode(records: Records, code: string): Promise<CodeClaim> {
  if (code.length > 200) return { outcome: "unknown" };
  const key = codeKey(code);
  const item = await records.get(key.pk, key.sk);
  if (!item) return { outcome: "unknown" };
  const stored = item as unknown as AuthorizationCode;
  if (stored.used) return { outcome: "replayed", code: stored };
  try {
    await records.update(key.pk, key.sk, { set: { used: true } }, { equals: { used: null } });
  } catch (error) {
    if (error instanceof ConditionFailedError) return { outcome: "replayed", code: stored };
    throw error;
  }
  return { outcome: "claimed", code: stored };
}
