import { HttpError } from "../../http/errors.ts";
import { maxJsonDepth, withinJsonDepth } from "../../util/json-depth.ts";

/**
 * What the gateway accepts as an agent card (spec 7 and 8): a JSON object of at most 1 MB, nested no deeper than
 * GATEWAY_MAX_JSON_DEPTH, with a string `name` and
 * at least one endpoint, in either protocol version's shape:
 * - A2A 1.0: `supportedInterfaces[]`, each with a string `url` and `protocolBinding` (`JSONRPC`, `HTTP+JSON`,
 *   `GRPC`) and usually a `protocolVersion`; no top-level `url` (the current `@a2a-js/sdk` serves cards so);
 * - A2A 0.3: a top-level `url` (with `preferredTransport` and optional `additionalInterfaces`).
 * Anything else is refused with a 422 naming what is wrong. The stored card is the one the gateway calls through:
 * it is never re-read from the agent's self-reported URL afterwards.
 */

export const AGENT_CARD_MAX_BYTES = 1024 * 1024;

export type AgentCardJson = Record<string, unknown> & { name: string };

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
  if (typeof card.name !== "string" || card.name === "") throw invalidCard("The agent card has no string `name`.");
  const interfaces = card.supportedInterfaces;
  if (interfaces !== undefined) {
    if (!Array.isArray(interfaces)) throw invalidCard("The agent card's `supportedInterfaces` is not an array.");
    interfaces.forEach(checkInterface);
  }
  const hasUrl = typeof card.url === "string" && card.url !== "";
  if (!hasUrl && (!Array.isArray(interfaces) || interfaces.length === 0))
    throw invalidCard(
      "The agent card has no endpoint: neither `supportedInterfaces` (A2A 1.0) nor a string `url` (0.3).",
    );
  return card as AgentCardJson;
}

function checkInterface(entry: unknown, index: number): void {
  const where = `supportedInterfaces[${index}]`;
  if (typeof entry !== "object" || entry === null || Array.isArray(entry))
    throw invalidCard(`The agent card's \`${where}\` is not an object.`);
  const { url, protocolBinding, protocolVersion } = entry as Record<string, unknown>;
  if (typeof url !== "string" || url === "") throw invalidCard(`The agent card's \`${where}\` has no string \`url\`.`);
  if (typeof protocolBinding !== "string" || protocolBinding === "")
    throw invalidCard(`The agent card's \`${where}\` has no string \`protocolBinding\`.`);
  if (protocolVersion !== undefined && typeof protocolVersion !== "string")
    throw invalidCard(`The agent card's \`${where}.protocolVersion\` is not a string.`);
}
