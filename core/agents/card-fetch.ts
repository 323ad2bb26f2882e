import { HttpError, upstreamTooLargeIn } from "../http/errors.ts";
import { CustomHostBlockedError, type TrustedHosts, checkCustomHost } from "../security/custom-host.ts";
import { guardedFetch } from "../security/guarded-dispatcher.ts";
import { AGENT_CARD_MAX_BYTES, type AgentCardJson, cardTooLarge, invalidCard, parseAgentCard } from "./card-rules.ts";

/**
 * Fetches an agent card from a caller-given URL under the SSRF rules: the URL (and every redirect target) is
 * checked like a custom host, the connection goes through the guarded dispatcher, the call is bounded by a
 * timeout (headers and body alike) and at most 1 MB is read. A URL ending in `.json` is the card itself; any other is the agent's base
 * URL, whose `/.well-known/agent-card.json` is read, falling back to the older `/.well-known/agent.json`.
 */

export interface CardFetchOptions {
  trustedHosts: TrustedHosts;
  timeoutMs: number;
  /** Sent with the request (an agent whose card needs authentication). */
  headers?: Record<string, string>;
}

export interface FetchedCard {
  card: AgentCardJson;
  cardUrl: string;
}

const MAX_REDIRECTS = 3;
export const WELL_KNOWN_CARD_PATHS = ["/.well-known/agent-card.json", "/.well-known/agent.json"];

/** The URLs to try, in order. */
export function cardCandidates(url: URL): string[] {
  if (url.pathname.endsWith(".json")) return [url.href];
  const base = `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  return WELL_KNOWN_CARD_PATHS.map((path) => `${base}${path}${url.search}`);
}

export async function fetchAgentCard(rawUrl: string, options: CardFetchOptions): Promise<FetchedCard> {
  const url = await checkCustomHost(rawUrl, options.trustedHosts, "url");
  const candidates = cardCandidates(url);
  for (const [index, candidate] of candidates.entries()) {
    const response = await fetchFollowingPublicRedirects(candidate, options);
    if (response.status === 404 && index < candidates.length - 1) {
      await response.body?.cancel().catch(() => {});
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw invalidCard(
        `The agent card could not be fetched from ${candidate}: HTTP ${response.status}.`,
        "agent_card_unavailable",
      );
    }
    return { card: parseAgentCard(await readCardText(response, candidate)), cardUrl: candidate };
  }
  throw invalidCard("No agent card was found.", "agent_card_unavailable");
}

/** Up to MAX_REDIRECTS redirects, each target checked like the first URL (private hosts refused with 400). */
async function fetchFollowingPublicRedirects(first: string, options: CardFetchOptions): Promise<Response> {
  // The body is bounded as it is read (AGENT_CARD_MAX_BYTES; a larger declared length is refused at once).
  const fetchGuarded = guardedFetch(options.trustedHosts, { maxBytes: AGENT_CARD_MAX_BYTES, what: "The agent card" });
  const signal = AbortSignal.timeout(options.timeoutMs);
  let target = first;
  for (let hop = 0; ; hop++) {
    let response: Response;
    try {
      response = await fetchGuarded(target, {
        method: "GET",
        headers: { accept: "application/json", ...options.headers },
        redirect: "manual",
        signal,
      });
    } catch (error) {
      throw fetchFailure(error, target);
    }
    const location = response.headers.get("location");
    if (response.status < 300 || response.status >= 400 || !location) return response;
    await response.body?.cancel().catch(() => {});
    if (hop >= MAX_REDIRECTS)
      throw invalidCard("The agent card URL redirects too many times.", "agent_card_unavailable");
    target = (await checkCustomHost(new URL(location, target).href, options.trustedHosts, "url")).href;
  }
}

function fetchFailure(error: unknown, target: string): HttpError {
  if (upstreamTooLargeIn(error)) return cardTooLarge();
  const cause = (error as { cause?: unknown }).cause;
  if (error instanceof CustomHostBlockedError || cause instanceof CustomHostBlockedError) {
    const blocked = (cause instanceof CustomHostBlockedError ? cause : error) as Error;
    return new HttpError(400, `URL rejected: ${blocked.message}.`, { param: "url", code: "invalid_custom_host" });
  }
  if ((error as Error).name === "TimeoutError")
    return invalidCard(`Fetching the agent card from ${target} timed out.`, "agent_card_unavailable");
  return invalidCard(`The agent card could not be fetched from ${target}.`, "agent_card_unavailable");
}

/**
 * The card's text. Reading it is bounded in size (the fetch) and in time (the same timeout as the fetch: a card
 * that trickles in fails like one that never comes), and every failure is the caller's 4xx, never a 500.
 */
async function readCardText(response: Response, target: string): Promise<string> {
  try {
    return await response.text();
  } catch (error) {
    throw fetchFailure(error, target);
  }
}
