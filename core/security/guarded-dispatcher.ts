import { isIP } from "node:net";
import type { Agent, buildConnector } from "undici";
import { addressAllowed, CustomHostBlockedError, guardedLookup, type TrustedHosts } from "./custom-host.ts";

/**
 * The one connection pool every upstream call goes through (providers, pass-through, token exchanges, JWKS):
 * an undici Agent (keep-alive pools per origin) whose connector refuses private, reserved and metadata
 * addresses unless TRUSTED_CUSTOM_HOSTS admits them. It checks at connect time, whatever built the URL (a
 * custom host, a region, a resource name, a key's token_uri), so neither a host name built from a caller's
 * value nor DNS rebinding reaches an internal address:
 * - IP literals are checked before connecting (net.connect does no lookup for them);
 * - names are resolved by guardedLookup, which hands the socket only addresses it checked.
 * Refusals fail the call with CustomHostBlockedError (mapped to a 400 `invalid_custom_host`).
 */

const agents = new WeakMap<TrustedHosts, Agent>();
const pending = new WeakMap<TrustedHosts, Promise<Agent>>();

/**
 * The guarded dispatcher for a trust list (one per TrustedHosts, so one per process). Returns the Agent itself
 * once it exists (no promise per call on the hot path), a promise only for the first call, which loads undici.
 */
export function guardedDispatcher(trusted: TrustedHosts): Agent | Promise<Agent> {
  const agent = agents.get(trusted);
  if (agent) return agent;
  let loading = pending.get(trusted);
  if (!loading) {
    // undici is loaded on the first upstream call: functions that never call out (control plane) skip it.
    loading = loadUndici().then(({ Agent, buildConnector }) => {
      const created = new Agent({ connect: guardedConnector(trusted, buildConnector) });
      agents.set(trusted, created);
      pending.delete(trusted);
      return created;
    });
    pending.set(trusted, loading);
  }
  return loading;
}

/** undici, loaded on first use (./undici.ts says why it is a module of its own). */
function loadUndici(): Promise<typeof import("./undici.ts")> {
  return import("./undici.ts");
}

/** undici's connector, with the address checks in front of it. */
function guardedConnector(trusted: TrustedHosts, build: typeof buildConnector): buildConnector.connector {
  const connect = build({ lookup: guardedLookup(trusted) } as buildConnector.BuildOptions);
  return (options, callback) => {
    const host = options.hostname.replace(/^\[|\]$/g, "");
    if (isIP(host) && !addressAllowed(host, trusted)) {
      callback(new CustomHostBlockedError(host, host), null);
      return;
    }
    return connect(options, callback);
  };
}

/**
 * A fetch through the guarded dispatcher, for side requests that want fetch's shape (jose's JWKS fetch, OAuth
 * token exchanges). Redirects are refused by the caller's `redirect` option; the inference path uses the
 * dispatcher directly (core/providers/upstream/client.ts).
 */
export function guardedFetch(trusted: TrustedHosts): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const [{ fetch: undiciFetch }, dispatcher] = await Promise.all([loadUndici(), guardedDispatcher(trusted)]);
    return undiciFetch(input as string, { ...(init as object), dispatcher } as Parameters<typeof undiciFetch>[1]);
  }) as unknown as typeof fetch;
}
