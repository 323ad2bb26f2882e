import type { HandlerMap } from "../../http/context.ts";
import { geminiModelCall } from "../../inference/gateway/gemini-call.ts";

/** Google's Gemini API (`POST /v1beta/models/{model}:{method}`, and `/v1alpha`) on every provider. */
export const handlers: HandlerMap = { geminiModelCall };
