import { TextAnswer, type RouteAdapter, type TransformContext, type UpstreamRequest } from "../types.ts";
import { bodyOf, rememberBody } from "./request-body.ts";
import type { TranscriptSegment } from "./transcript.ts";
import { loadOnce } from "../../util/load-once.ts";

type Transcripts = typeof import("./transcript.ts");

/**
 * The SRT and WebVTT writers (transcript.ts, with the other providers' transcript shapes) are loaded by the first
 * request for subtitles, once: every inference function loads the OpenAI-compatible table, whose audio routes this is.
 */
const transcripts = loadOnce<Transcripts>(() => import("./transcript.ts"));

/**
 * An OpenAI-shaped transcription route of a provider that writes no subtitles (Groq answers only json, text
 * and verbose_json: https://console.groq.com/docs/speech-to-text): `srt` and `vtt` are asked as verbose_json
 * and rendered here from its segments; every other format passes through as from OpenAI.
 */
export function subtitleRoute(
  relayed: (body: Record<string, any>) => boolean,
  send: (body: Record<string, any>, ctx: TransformContext) => Promise<UpstreamRequest>,
): RouteAdapter {
  return {
    async buildRequest(body, ctx) {
      rememberBody(ctx, body);
      if (!rendersSubtitles(body)) return send(body, ctx);
      await transcripts.get();
      return send({ ...body, response_format: "verbose_json" }, ctx);
    },
    transformResponse(upstream, ctx) {
      const body = bodyOf(ctx);
      if (!rendersSubtitles(body)) return upstream;
      const segments: TranscriptSegment[] = (Array.isArray(upstream?.segments) ? upstream.segments : [])
        .filter((segment: any) => typeof segment?.start === "number" && typeof segment?.end === "number")
        .map((segment: any) => ({ start: segment.start, end: segment.end, text: String(segment.text ?? "") }));
      // Loaded by buildRequest, which saw the same body.
      const { renderSrt, renderVtt } = transcripts.loaded()!;
      const text = body.response_format === "srt" ? renderSrt(segments) : renderVtt(segments);
      return new TextAnswer(text, "text/plain; charset=utf-8");
    },
    rawAnswer: (body) => !rendersSubtitles(body) && relayed(body),
    // The rendered subtitles lose verbose_json's duration: it is read here for per-second pricing.
    usageOf(answer: any, body) {
      const seconds = answer?.duration;
      return rendersSubtitles(body) && typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0
        ? { units: { seconds } }
        : undefined;
    },
  };
}

function rendersSubtitles(body: Record<string, any>): boolean {
  return body.stream !== true && (body.response_format === "srt" || body.response_format === "vtt");
}
