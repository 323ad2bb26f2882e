import { MOCK_MODEL } from "./mock-model.ts";

/**
 * The inbound formats the gateway translates to chat, as benchmark requests: the same conversation as the chat
 * cell's body (bench/gateway-server.ts, `benchRequest`), sent as OpenAI's Responses API (`POST /v1/responses`) and
 * as Anthropic's Messages API (`POST /v1/messages`), and a check that the answer is the format's, not chat's.
 *
 * Both cells reach the mock's chat completions through a provider without a native route for the format: the
 * gateway translates the body to chat, the chat answer (or chunks) back to the format (core/inference/formats).
 * The Responses body says `store: false`: the cell measures the translation; storing the response and its input
 * items is another write per request (the Responses API's default), which the chat cell has no counterpart of.
 */
export type FormatTarget = "responses" | "messages";

const SYSTEM = "You are a helpful assistant. Answer briefly.";
const USER = "Say hello to the benchmark in one short sentence.";

/** The provider the formats are translated for: OpenAI-compatible, with chat but no native Responses or Messages. */
export const TRANSLATED_PROVIDER = "openai-compatible";

export function formatPath(target: FormatTarget): string {
  return target === "responses" ? "/v1/responses" : "/v1/messages";
}

export function formatBody(target: FormatTarget, stream: boolean): string {
  if (target === "responses") {
    return JSON.stringify({
      model: MOCK_MODEL,
      instructions: SYSTEM,
      input: [{ role: "user", content: USER }],
      max_output_tokens: 64,
      temperature: 0.2,
      store: false,
      ...(stream ? { stream: true } : {}),
    });
  }
  return JSON.stringify({
    model: MOCK_MODEL,
    system: SYSTEM,
    messages: [{ role: "user", content: USER }],
    max_tokens: 64,
    temperature: 0.2,
    ...(stream ? { stream: true } : {}),
  });
}

/**
 * The answer's check: a JSON answer of the format's shape with text in it, or a stream of the format's events
 * (at least `minEvents` data lines) ending with its last event. "ok" or "FAILED: ...".
 */
export function checkFormatAnswer(target: FormatTarget, text: string, stream: boolean, minEvents: number): string {
  if (!stream) {
    const json = JSON.parse(text);
    const answered =
      target === "responses"
        ? json.object === "response" && typeof json.output?.[0]?.content?.[0]?.text === "string"
        : json.type === "message" && typeof json.content?.[0]?.text === "string";
    return answered ? "ok" : `FAILED: unexpected body ${text.slice(0, 200)}`;
  }
  const events = text.split("\n").filter((line) => line.startsWith("data: {")).length;
  const last = target === "responses" ? "response.completed" : "message_stop";
  if (!text.includes(`event: ${last}`)) return `FAILED: no ${last} (${events} events)`;
  return events >= minEvents ? `ok (${events} events)` : `FAILED: ${events} events`;
}
