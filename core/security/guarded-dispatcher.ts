import { isIP } from "node:net";
import type { Agent, buildConnector } from "undici";
import { upstreamTooLarge } from "../http/errors.ts";
import { boundedResponse } from "../util/read-bounded.ts";
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

/** The most of a side request's answer read (a JWKS, OAuth metadata, a token): they are a few KB. */
export const SIDE_ANSWER_MAX_BYTES = 1024 * 1024;

export interface AnswerLimit {
  /** Bytes of one answer's body (default SIDE_ANSWER_MAX_BYTES). */
  maxBytes: number;
  /** Names the upstream in the error (`The MCP server's answer`). */
  what: string;
  /** The variable that sets the limit, when one does. */
  setting?: string;
  /** Told when an answer passes the limit (an SDK client to close, whose readers would otherwise wait on). */
  onTooLarge?: (error: Error) => void;
}

const SIDE_ANSWERS: AnswerLimit = { maxBytes: SIDE_ANSWER_MAX_BYTES, what: "The upstream's answer" };

/**
 * A fetch through the guarded dispatcher, for calls that want fetch's shape (jose's JWKS fetch, OAuth token
 * exchanges, the MCP and A2A SDK transports). Every answer's body is bounded (core/util/read-bounded.ts): past
 * `limit.maxBytes` it errors with a 502 `upstream_response_too_large` HttpError, whoever reads it. Redirects
 * are refused by the caller's `redirect` option; the inference path uses the dispatcher directly
 * (core/gateway/upstream/client.ts).
 */
export function guardedFetch(trusted: TrustedHosts, limit: AnswerLimit = SIDE_ANSWERS): typeof fetch {
  const tooLarge = () => {
    const error = upstreamTooLarge(limit.what, limit.maxBytes, limit.setting);
    limit.onTooLarge?.(error);
    return error;
  };
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const [{ fetch: undiciFetch }, dispatcher] = await Promise.all([loadUndici(), guardedDispatcher(trusted)]);
    const response = await undiciFetch(
      input as string,
      { ...(init as object), dispatcher } as Parameters<typeof undiciFetch>[1],
    );
    return boundedResponse(response as unknown as Response, limit.maxBytes, tooLarge);
  }) as unknown as typeof fetch;
}
