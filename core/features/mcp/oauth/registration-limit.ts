import type { Counters } from "../../../store/ports.ts";
import { OAuthError } from "./oauth-errors.ts";

/**
 * Dynamic registration is anonymous, so one counter per clock hour caps how many clients the whole gateway
 * accepts (GATEWAY_OAUTH_REGISTRATIONS_PER_HOUR). Behind proxies the client address cannot be trusted, so the cap
 * is global rather than per IP; with the unused-client TTL it bounds what registrations can put in the store.
 */
export async function admitRegistration(counters: Counters, perHour: number, now = Date.now()): Promise<void> {
  const hour = Math.floor(now / 3_600_000);
  const result = await counters.add(`oauth-registrations:${hour}`, 1, {
    ceiling: perHour,
    expiresAt: (hour + 2) * 3600,
  });
  if (!result.admitted) {
    const retryAfter = String(Math.max(1, (hour + 1) * 3600 - Math.floor(now / 1000)));
    throw new OAuthError("temporarily_unavailable", "Too many client registrations this hour; try again later.", {
      status: 429,
      headers: { "retry-after": retryAfter },
    });
  }
}
