import type { RequestContext } from "../../services.ts";
import { pooledRandomBytes } from "../../util/ids.ts";

/**
 * The key that names what the gateway makes for one request: `chatcmpl-<key>` for a translated chat answer,
 * `resp-<key>` from which a translated Response's id and its items' ids derive (formats/responses/ids.ts). Made
 * once per request (96 random bits) and kept on its context, so the JSON answer, the stream, a continuation on
 * another target and the stored copy name the same objects. Never the trace id: a trace groups many requests (an
 * agent's steps, a Portkey session), and answers sharing it shared one id (a later Response overwrote an earlier).
 */
export function answerKeyOf(ctx: RequestContext): string {
  ctx.answerKey ??= Buffer.from(pooledRandomBytes(12)).toString("hex");
  return ctx.answerKey;
}
