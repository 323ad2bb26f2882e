import { HttpError } from "../http/errors.ts";
import { maxJsonDepth, withinJsonDepth } from "../util/json-depth.ts";

/**
 * What the gateway accepts as an agent card (spec 7 and 8): a JSON object of at most 1 MB, nested no deeper than
 * GATEWAY_MAX_JSON_DEPTH, with a string `url` and `name`. Anything else is refused with a 422 naming what is wrong.
 */

export const AGENT_CARD_MAX_BYTES = 1024 * 1024;

export type AgentCardJson = Record<string, unknown> & { url: string; name: string };

export const invalidCard = (message: string, code = "invalid_agent_card") =>
  new HttpError(422, message, { param: "url", code });

export const cardTooLarge = () =>
  invalidCard(`The agent card is larger than ${AGENT_CARD_MAX_BYTES} bytes.`, "agent_card_too_large");

/** The card parsed from `text`, checked; throws a 422 HttpError otherwise. */
export function parseAgentCard(text: string): AgentCardJson {
  if (Buffer.byteLength(text) > AGENT_CARD_MAX_BYTES) throw cardTooLarge();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidCard("The agent card is not valid JSON.");
  }
  // A card is stored and served again: nesting past the body limit would fail those later, as a 500.
  if (!withinJsonDepth(value))
    throw invalidCard(
      `The agent card nests objects and arrays deeper than the limit of ${maxJsonDepth()} levels (GATEWAY_MAX_JSON_DEPTH).`,
      "agent_card_too_deep",
    );
  return checkAgentCard(value);
}

export function checkAgentCard(value: unknown): AgentCardJson {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw invalidCard("The agent card is not a JSON object.");
  const card = value as Record<string, unknown>;
  const missing = ["url", "name"].filter((field) => typeof card[field] !== "string" || card[field] === "");
  if (missing.length > 0)
    throw invalidCard(`The agent card has no string ${missing.map((field) => `\`${field}\``).join(" or ")}.`);
  return card as AgentCardJson;
}
