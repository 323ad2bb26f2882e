import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { selfSignedCertificate } from "./certificate.ts";
import type { ShapeDefinition } from "./definition.ts";
import { startFunctionUrl } from "./function-url.ts";
import type { InstancePool } from "./instance-pool.ts";
import { startRealtimeContainer } from "./realtime-container.ts";
import { type RouterRoute, type RouteTarget, startRouter } from "./router.ts";
import { siteBuilt, staticSite } from "./static-site.ts";

/**
 * What the Router sends requests to, and the Router itself: a function URL for every function that has one, the
 * realtime container (unless left out), the console's static site (built first, as `sst deploy` builds it, if
 * missing), each behind the routes infra/ adds to the Router. A route that names nothing the shape runs fails the
 * start: infra added something the shape does not know.
 */

const ROOT = resolve(import.meta.dirname, "../..");

export interface EdgeOptions {
  pools: Map<string, InstancePool>;
  /** The service's environment, already resolved; undefined leaves the service out. */
  serviceEnvironment?: Record<string, string>;
  readTimeoutSeconds?: number;
  log(line: string): void;
  /** Registers what to stop when the shape stops. */
  onClose(closer: () => Promise<void> | void): void;
}

export async function startEdge(
  definition: ShapeDefinition,
  options: EdgeOptions,
): Promise<{ url: string; certificate: Buffer }> {
  const targets = new Map<string, RouteTarget>();
  for (const fn of definition.functions) {
    if (!fn.url) continue;
    const functionUrl = await startFunctionUrl(new URL(fn.url).host, options.pools.get(fn.name)!);
    options.onClose(() => functionUrl.close());
    targets.set(fn.url, { kind: "origin", url: functionUrl.url, domain: functionUrl.domain });
  }
  if (definition.service && options.serviceEnvironment) {
    const service = await startRealtimeContainer({
      environment: options.serviceEnvironment,
      healthPath: definition.service.healthPath,
      log: options.log,
    });
    options.onClose(() => service.close());
    targets.set(definition.service.url, {
      kind: "origin",
      url: service.url,
      domain: new URL(definition.service.url).host,
    });
  }
  if (definition.site) {
    if (!siteBuilt(definition.site, ROOT)) buildSite(definition.site.buildCommand);
    targets.set(definition.site.url, { kind: "static", handle: staticSite(definition.site, ROOT) });
  }
  const routes: RouterRoute[] = definition.routes.flatMap((route) => {
    const target = targets.get(route.url);
    // The realtime service left out: its routes go nowhere.
    if (!target && route.url === definition.service?.url) return [];
    if (!target) throw new Error(`the AWS shape has nothing behind the route ${route.pattern} (${route.url})`);
    const readTimeoutMs = (options.readTimeoutSeconds ?? route.readTimeoutSeconds) * 1000;
    return [{ pattern: route.pattern, target, readTimeoutMs }];
  });
  const certificate = selfSignedCertificate();
  const router = await startRouter(routes, certificate);
  options.onClose(() => router.close());
  return { url: router.url, certificate: certificate.cert };
}

/** As `sst deploy` does before uploading: the site's build command (the console, with Vite). */
function buildSite(command: string): void {
  const [program, ...args] = command.split(" ");
  execFileSync(program === "node" ? process.execPath : program!, args, { cwd: ROOT, stdio: "inherit" });
}
