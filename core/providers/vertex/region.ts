import { hostValueProblem } from "../../security/host-values.ts";
import { type TransformContext, UpstreamError } from "../types.ts";

export const DEFAULT_VERTEX_REGION = "us-central1";

/** Region and host: `global` is served from aiplatform.googleapis.com, any other region from `{region}-aiplatform`. */
export function vertexRegion(ctx: Pick<TransformContext, "target">): string {
  const region = ctx.target.vertex?.region?.trim() || DEFAULT_VERTEX_REGION;
  // The region becomes part of a host name: nothing but a region-shaped token gets there.
  const problem = hostValueProblem("vertex_region", region);
  if (problem) throw new UpstreamError(400, `Invalid Vertex AI region: ${problem}`, { param: "vertex_region" });
  return region;
}
