import type { RouteFamily } from "../../http/route-types.ts";

/**
 * OpenAI's Audio API: speech streamed back as the provider sends it, transcripts in every response_format.
 */
export const family: RouteFamily = {
  name: "audio",
  dataPlane: true,
  timeoutSeconds: 600,
  routes: [
    { method: "POST", path: "/v1/audio/speech", handler: "createSpeech", auth: "api_key", body: "json" },
    {
      method: "POST",
      path: "/v1/audio/transcriptions",
      handler: "createTranscription",
      auth: "api_key",
      body: "upload",
    },
    { method: "POST", path: "/v1/audio/translations", handler: "createTranslation", auth: "api_key", body: "upload" },
  ],
};
