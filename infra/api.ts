import { ROUTE_FAMILIES, type RouteFamily } from "../core/routes/table.ts";
import { gatewayEnvironment, gatewayLinks, gatewayPermissions, NODE_RUNTIME } from "./gateway-runtime.ts";
import { componentName } from "./naming.ts";
import { routerPrefixes } from "./router-prefixes.ts";

/**
 * The HTTP API: one streaming Lambda function (with a function URL) per route family of the route table,
 * and one Router (CloudFront) in front that sends each family's path prefixes to its function. Families that
 * run in a container (RouteFamily.platform, the realtime WebSocket proxy) get no function: infra/realtime.ts
 * routes their prefixes to its service, and static families (the web console) are served from a bucket
 * (infra/console.ts).
 */

/** Data-plane families get more memory: Lambda's CPU share grows with it, and it shortens cold starts. */
const memoryOf = (family: RouteFamily) => (family.dataPlane ? "1024 MB" : "512 MB");

/** The families deployed as Lambda functions. */
export const LAMBDA_FAMILIES = ROUTE_FAMILIES.filter((family) => (family.platform ?? "lambda") === "lambda");

export const functions: Record<string, sst.aws.Function> = Object.fromEntries(
  LAMBDA_FAMILIES.map((family) => [
    family.name,
    new sst.aws.Function(componentName(family.name, "function"), {
      description: `AI gateway: ${family.name} routes`,
      handler: `functions/${family.name}.handler`,
      ...NODE_RUNTIME,
      memory: memoryOf(family),
      timeout: `${family.timeoutSeconds} seconds`,
      streaming: true,
      url: true,
      link: gatewayLinks,
      permissions: gatewayPermissions,
      environment: gatewayEnvironment,
    }),
  ]),
);

/**
 * CloudFront routes by path only, and Lambda cannot hold a WebSocket: an upgrade to `/v1/responses` (the Responses
 * WebSocket mode, which the SDKs open at `<base URL>/responses`) is rewritten, before the Router's own routing runs,
 * to `/v1/realtime/responses`, under the realtime container service's prefix (infra/realtime.ts); the service serves
 * both paths (core/platform/node/realtime-upgrade.ts). Every plain HTTP request to `/v1/responses` still reaches its
 * function. A CloudFront Function's viewer-request code: `event.request` with lower-cased header names.
 */
export const RESPONSES_WEBSOCKET_REWRITE = `
var upgrade = event.request.headers.upgrade;
if (event.request.uri === "/v1/responses" && upgrade && upgrade.value.toLowerCase() === "websocket") {
  event.request.uri = "/v1/realtime/responses";
}`;

export const router = new sst.aws.Router("Gateway", {
  edge: { viewerRequest: { injection: RESPONSES_WEBSOCKET_REWRITE } },
});

// Longest prefix wins in the Router, whatever the order of these calls (see router-prefixes.ts).
for (const { prefix, family } of routerPrefixes(ROUTE_FAMILIES)) {
  if (!functions[family]) continue;
  router.route(prefix, functions[family].url, {
    // CloudFront waits this long for the first byte, and then between bytes, of a streamed answer. 60 s is
    // its ceiling without a quota increase; a slow non-streamed completion can take longer (README, Deploying to AWS).
    readTimeout: "60 seconds",
  });
}
