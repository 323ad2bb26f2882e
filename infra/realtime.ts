import { ROUTE_FAMILIES } from "../core/routes/table.ts";
import { router } from "./api.ts";
import { gatewayEnvironment, gatewayLinks, gatewayPermissions } from "./gateway-runtime.ts";
import { routerPrefixes } from "./router-prefixes.ts";

/**
 * The realtime WebSocket proxy on AWS (core/platform/aws/realtime-service.ts): Lambda cannot hold a WebSocket,
 * so the route families marked `platform: "container"` run as one small Fargate service built from
 * services/realtime/Dockerfile (the same core, bundled into one file), behind a public load balancer (HTTP; the
 * Router's CloudFront terminates TLS and passes WebSocket upgrades through), and the Router sends their
 * prefixes to it. It has the same links, permissions and environment as the functions, so it reads and writes
 * the same stores (keys, configs, integrations, policies, logs).
 *
 * Cost: one Fargate task and one Application Load Balancer run all the time, whether sessions run or not (see
 * docs/deploying-aws.md); deploy with GATEWAY_REALTIME_SERVICE=off to leave all of this out (sst.config.ts).
 */

/** The port the container listens on (PORT in its environment, EXPOSE in the Dockerfile). */
export const REALTIME_PORT = 8080;

/** The families this service serves. */
export const CONTAINER_FAMILIES = ROUTE_FAMILIES.filter((family) => family.platform === "container");

export const vpc = new sst.aws.Vpc("RealtimeVpc");

export const cluster = new sst.aws.Cluster("RealtimeCluster", { vpc });

export const service = new sst.aws.Service("RealtimeService", {
  cluster,
  image: { context: ".", dockerfile: "services/realtime/Dockerfile" },
  architecture: "arm64",
  cpu: "0.25 vCPU",
  memory: "0.5 GB",
  scaling: { min: 1, max: 4, cpuUtilization: 70, memoryUtilization: 70 },
  loadBalancer: {
    ports: [{ listen: "80/http", forward: `${REALTIME_PORT}/http` }],
    health: { [`${REALTIME_PORT}/http`]: { path: "/health", interval: "10 seconds", healthyThreshold: 2 } },
  },
  // A quiet session must outlive the load balancer's idle timeout (60 s by default): as long as the gateway's own.
  transform: { loadBalancer: { idleTimeout: 600 } },
  link: gatewayLinks,
  permissions: gatewayPermissions,
  environment: { ...gatewayEnvironment, PORT: String(REALTIME_PORT), HOST: "0.0.0.0" },
});

const containerNames = new Set(CONTAINER_FAMILIES.map((family) => family.name));
for (const { prefix, family } of routerPrefixes(ROUTE_FAMILIES)) {
  if (!containerNames.has(family)) continue;
  router.route(prefix, service.url, {
    // For a WebSocket, how long CloudFront waits for the origin's handshake answer.
    readTimeout: "60 seconds",
  });
}
