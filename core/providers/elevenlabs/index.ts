import { multipartRequest } from "../openai/compatible.ts";
import { bodyOf, rememberBody } from "../audio/request-body.ts";
import { checkTranscriptFormat, transcriptAnswer } from "../audio/transcript.ts";
import { mapUpstreamError } from "../errors.ts";
import type { ProviderAdapter, ProviderTarget, TransformContext } from "../types.ts";
import { joinUrl } from "../url.ts";
import { speechBody, speechPath } from "./speech.ts";
import { transcriptionForm, transcriptOfSpeechToText } from "./transcription.ts";

/**
 * ElevenLabs (`elevenlabs`): speech and transcriptions, the key in `xi-api-key`
 * (https://elevenlabs.io/docs/api-reference/authentication). A custom host replaces `https://api.elevenlabs.io/v1`.
 */
export const ELEVENLABS_BASE_URL = "https://api.elevenlabs.io/v1";

function baseUrl(target: ProviderTarget): string {
  return target.customHost ?? ELEVENLABS_BASE_URL;
}

function authHeaders(target: ProviderTarget): Record<string, string> {
  return target.apiKey ? { "xi-api-key": target.apiKey } : {};
}

function headers(ctx: TransformContext): Record<string, string> {
  return { ...authHeaders(ctx.target), ...ctx.target.forwardHeaders };
}

export const elevenLabsAdapter: ProviderAdapter = {
  id: "elevenlabs",
  name: "ElevenLabs",
  routes: {
    speech: {
      buildRequest(body, ctx) {
        return {
          url: joinUrl(baseUrl(ctx.target), speechPath(body)),
          method: "POST",
          headers: { ...headers(ctx), "content-type": "application/json" },
          body: speechBody(body),
        };
      },
      transformResponse: (upstream) => upstream,
      rawAnswer: () => true,
    },
    transcriptions: {
      buildRequest(body, ctx) {
        checkTranscriptFormat(body, "elevenlabs");
        rememberBody(ctx, body);
        return multipartRequest(joinUrl(baseUrl(ctx.target), "/speech-to-text"), headers(ctx), transcriptionForm(body));
      },
      transformResponse: (upstream, ctx) => transcriptAnswer(transcriptOfSpeechToText(upstream), bodyOf(ctx)),
    },
  },
  mapError: mapElevenLabsError,
  passthrough: (target) => ({
    baseUrl: baseUrl(target),
    headers: { ...authHeaders(target), ...target.forwardHeaders },
  }),
};

/**
 * ElevenLabs' error bodies: `{detail: {status, message}}`, or FastAPI's validation list
 * `{detail: [{loc, msg, type}]}` (422).
 */
export function mapElevenLabsError(status: number, text: string) {
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const detail = parsed?.detail;
  if (detail && typeof detail === "object" && !Array.isArray(detail) && typeof detail.message === "string") {
    const generic = mapUpstreamError(status, "");
    return {
      message: detail.message,
      type: generic.type,
      code: typeof detail.status === "string" ? detail.status : null,
      param: null,
    };
  }
  if (Array.isArray(detail) && detail.length > 0) {
    // The fields it names are ElevenLabs' (`model_id`), not the client's: told in the message, not as `param`.
    const generic = mapUpstreamError(status, "");
    return {
      message: detail.map((item: any) => `${(item?.loc ?? []).join(".")}: ${item?.msg ?? ""}`).join("; "),
      type: generic.type,
      code: typeof detail[0]?.type === "string" ? detail[0].type : null,
      param: null,
    };
  }
  const generic = mapUpstreamError(status, text);
  return { message: generic.message, type: generic.type, code: generic.code, param: generic.param };
}
