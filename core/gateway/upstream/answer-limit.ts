/**
 * The most of a provider's answer the upstream client reads whole (GATEWAY_MAX_UPSTREAM_RESPONSE_BYTES), set
 * once when services start. Process-wide like the JSON depth limit (core/util/json-depth.ts): every caller of
 * the client (inference, pass-through errors, batches, files, token counts) would otherwise have to carry it.
 * A module of its own so that services need not load the client to set it.
 */
let maxAnswerBytes = 128 * 1024 * 1024;

export function setMaxUpstreamAnswerBytes(limit: number): void {
  maxAnswerBytes = limit;
}

export const maxUpstreamAnswerBytes = (): number => maxAnswerBytes;
