import type { PassthroughContext, PassthroughEndpoint, ProviderTarget } from "../types.ts";
import { vertexAccessToken } from "./auth.ts";
import { vertexRegion } from "./region.ts";
import { vertexRequestTypeHeaders } from "./request-type.ts";

/**
 * Pass-through to Vertex AI (https://cloud.google.com/vertex-ai/docs/reference/rest): the regional endpoint
 * `https://{region}-aiplatform.googleapis.com/v1` (region `global`: `https://aiplatform.googleapis.com/v1`; a custom
 * host keeps its own `/v1` or `/v1beta1`) + the client's path (`/projects/{p}/locations/{r}/publishers/...`), with
 * `Authorization: Bearer` the service account's access token (exchanged and cached by auth.ts) or the given token.
 */
export async function vertexPassthrough(target: ProviderTarget, ctx: PassthroughContext): Promise<PassthroughEndpoint> {
  const region = vertexRegion({ target });
  const host =
    region === "global" ? "https://aiplatform.googleapis.com" : `https://${region}-aiplatform.googleapis.com`;
  const base = (target.customHost ?? host).replace(/\/+$/, "");
  const token = await vertexAccessToken({
    target,
    fetch: ctx.fetch,
    signal: ctx.signal,
    trustedHosts: ctx.trustedHosts,
  });
  const headers: Record<string, string> = vertexRequestTypeHeaders(target);
  for (const [name, value] of Object.entries(target.forwardHeaders ?? {})) headers[name.toLowerCase()] = value;
  headers.authorization = `Bearer ${token}`;
  return { baseUrl: /\/v1(beta1)?$/.test(base) ? base : `${base}/v1`, headers };
}
