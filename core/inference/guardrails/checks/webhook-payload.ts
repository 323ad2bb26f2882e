import type { CheckInput } from "../types.ts";
import { phaseTexts, textsRouteOf } from "../texts.ts";

/**
 * What `default.webhook` POSTs, in the shape of Portkey's webhook guardrail: the request (`json` as the client
 * sent it, `text`: the last message), on output the answer too, the request type in Portkey's names, the
 * request's metadata and the hook (`beforeRequestHook` on input, `afterRequestHook` on output). The request's
 * headers are never in it: they carry the caller's credentials.
 */
export interface WebhookPayload {
  request: { json: Record<string, unknown>; text: string; isStreamingRequest: boolean };
  response: { json: Record<string, unknown>; text: string };
  requestType: string;
  metadata: Record<string, string>;
  eventType: "beforeRequestHook" | "afterRequestHook";
}

/** Portkey's names of the request types; the others keep ours. */
const PORTKEY_REQUEST_TYPES: Readonly<Record<string, string>> = {
  chat: "chatComplete",
  completions: "complete",
  embeddings: "embed",
};

export function webhookPayload(input: CheckInput): WebhookPayload {
  const output = input.phase === "output";
  return {
    request: {
      json: input.request,
      text: output ? phaseTexts(textsRouteOf(input), "input", input.request).text : input.text,
      isStreamingRequest: input.request.stream === true,
    },
    response: output ? { json: input.response ?? {}, text: input.text } : { json: {}, text: "" },
    requestType: PORTKEY_REQUEST_TYPES[input.route] ?? input.route,
    metadata: input.metadata,
    eventType: output ? "afterRequestHook" : "beforeRequestHook",
  };
}
