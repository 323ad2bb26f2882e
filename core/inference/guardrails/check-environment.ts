import type { RequestContext } from "../../services.ts";
import { checkInference } from "./check-inference.ts";
import { outboundJson } from "./outbound-json.ts";
import type { CheckEnvironment } from "./types.ts";

/**
 * What the checks of one request may reach beyond their input (the contract is `CheckEnvironment` in
 * types.ts): JSON over HTTP under the SSRF rules (outbound-json.ts) and the gateway's own pipeline
 * (check-inference.ts). Loaded with the runner, on a request's first guardrail.
 */
export function checkEnvironment(request: Request, ctx: RequestContext): CheckEnvironment {
  const trusted = ctx.services.trustedHosts;
  return {
    postJson: (url, body, options) => outboundJson(trusted, { method: "POST", url, body, ...options }),
    getJson: (url, options) => outboundJson(trusted, { method: "GET", url, ...options }),
    infer: checkInference(request, ctx),
  };
}
