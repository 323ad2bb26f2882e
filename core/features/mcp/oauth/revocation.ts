import type { Records } from "../../../store/ports.ts";
import { type StoredToken, deleteToken, findLiveToken, revokeFamily } from "./tokens.ts";

/**
 * `POST /oauth/revoke` (RFC 7009): a client ends a token it was issued. Revoking a refresh token ends its whole
 * family (every access token of the grant too); an access token ends alone. Unknown tokens and other clients'
 * tokens change nothing, and the answer is the same 200 either way, so it tells nothing about them.
 */
export async function revokeToken(records: Records, clientId: string, token: string): Promise<StoredToken | undefined> {
  const stored = await findLiveToken(records, token);
  if (!stored || stored.clientId !== clientId) return undefined;
  if (stored.kind === "refresh") await revokeFamily(records, stored.familyId);
  else await deleteToken(records, token);
  return stored;
}
