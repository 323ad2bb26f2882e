import type { Counters } from "../../../store/ports.ts";

/**
 * Each valid `GET /oauth/authorize` keeps a pending request for ten minutes (pending-requests.ts). Anyone holding
 * a client id can ask, so per ten-minute window a client may open at most PER_CLIENT of them and the whole
 * gateway at most PER_GATEWAY: with capped registrations (registration-limit.ts) that bounds the store.
 */
const WINDOW_SECONDS = 600;
const PER_CLIENT = 120;
const PER_GATEWAY = 20_000;

/** True when another pending authorization request may be stored now for this client. */
export async function admitAuthorizationRequest(
  counters: Counters,
  clientId: string,
  now = Date.now(),
): Promise<boolean> {
  const window = Math.floor(now / 1000 / WINDOW_SECONDS);
  const expiresAt = (window + 2) * WINDOW_SECONDS;
  const client = await counters.add(`oauth-authorize:${clientId}:${window}`, 1, { ceiling: PER_CLIENT, expiresAt });
  if (!client.admitted) return false;
  const gateway = await counters.add(`oauth-authorize:*:${window}`, 1, { ceiling: PER_GATEWAY, expiresAt });
  return gateway.admitted;
}
