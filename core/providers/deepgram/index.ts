import { bodyOf, rememberBody } from "../audio/request-body.ts";
import { checkTranscriptFormat, transcriptAnswer } from "../audio/transcript.ts";
import { mapUpstreamError } from "../errors.ts";
import type { ProviderAdapter, ProviderTarget, TransformContext } from "../types.ts";
import { joinUrl } from "../url.ts";
import { listenBody, listenQuery, listenSeconds, transcriptOfListen } from "./listen.ts";
import { speakBody, speakQuery } from "./speak.ts";

/**
 * Deepgram (`deepgram`): transcriptions through `/v1/listen`, speech through `/v1/speak`, with
 * `Authorization: Token <key>` (https://developers.deepgram.com/reference/authentication). A custom host
 * replaces `https://api.deepgram.com/v1` (the version segment included, as for OpenAI-shaped providers).
 */
export const DEEPGRAM_BASE_URL = "https://api.deepgram.com/v1";

function baseUrl(target: ProviderTarget): string {
  return target.customHost ?? DEEPGRAM_BASE_URL;
}

function authHeaders(target: ProviderTarget): Record<string, string> {
  return target.apiKey ? { authorization: `Token ${target.apiKey}` } : {};
}

function headers(ctx: TransformContext, contentType: string): Record<string, string> {
  return { ...authHeaders(ctx.target), ...ctx.target.forwardHeaders, "content-type": contentType };
}

export const deepgramAdapter: ProviderAdapter = {
  id: "deepgram",
  name: "Deepgram",
  routes: {
    transcriptions: {
      buildRequest(body, ctx) {
        checkTranscriptFormat(body, "deepgram");
        rememberBody(ctx, body);
        const audio = listenBody(body);
        return {
          url: `${joinUrl(baseUrl(ctx.target), "/listen")}?${listenQuery(body)}`,
          method: "POST",
          headers: headers(ctx, audio.contentType),
          body: audio.bytes,
        };
      },
      transformResponse: (upstream, ctx) => transcriptAnswer(transcriptOfListen(upstream), bodyOf(ctx)),
      usageOf(answer) {
        const seconds = listenSeconds(answer);
        return seconds === undefined ? undefined : { units: { seconds } };
      },
    },
    speech: {
      buildRequest(body, ctx) {
        return {
          url: `${joinUrl(baseUrl(ctx.target), "/speak")}?${speakQuery(body)}`,
          method: "POST",
          headers: headers(ctx, "application/json"),
          body: speakBody(body),
        };
      },
      transformResponse: (upstream) => upstream,
      rawAnswer: () => true,
    },
  },
  mapError: mapDeepgramError,
  passthrough: (target) => ({
    baseUrl: baseUrl(target),
    headers: { ...authHeaders(target), ...target.forwardHeaders },
  }),
};

/**
 * Deepgram's error bodies: `{err_code, err_msg, request_id}` (speech-to-text) and
 * `{category, message, details, request_id}` (text-to-speech).
 */
export function mapDeepgramError(status: number, text: string) {
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const generic = mapUpstreamError(status, text);
  const message = parsed?.err_msg ?? parsed?.message ?? parsed?.details;
  const code = parsed?.err_code ?? parsed?.category;
  return {
    message: typeof message === "string" ? message : generic.message,
    type: generic.type,
    code: typeof code === "string" ? code : generic.code,
    param: null,
  };
}
