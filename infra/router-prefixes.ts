import type { RouteFamily } from "../core/routes/table.ts";

/**
 * Which path prefixes the Router sends to which family's function, derived from the route table.
 *
 * How sst.aws.Router matches (SST 3.10+/4: a CloudFront Function looks the routes up in a KeyValueStore):
 * a route pattern is a path prefix; it matches a request path that equals it or continues it with a `/`
 * (`/v1/models` matches `/v1/models` and `/v1/models/gpt-4o`, not `/v1/models-x`), and among the matching
 * routes the LONGEST prefix wins, whatever the order they were added in. So:
 * - each route contributes its path cut before the first `:param` or `*` segment;
 * - two families may not need the same prefix (one of them would get the other's requests);
 * - a longer prefix of another family must not be able to capture a route's concrete paths
 *   (`/v1/files/:id/content` of one family against `/v1/files/batch` of another would send
 *   `/v1/files/batch/content` astray);
 * - a prefix made redundant by a shorter one of the same family is dropped, to keep the router's table short;
 * - a catch-all route (`/v1/*` of the pass-through family) is exempt from the capture rule: it is meant to
 *   get only the paths no longer prefix claims.
 */

export interface RouterPrefix {
  prefix: string;
  family: string;
}

/** `/v1/files/:id/content` -> `/v1/files`; `/v1/models` -> `/v1/models`; `/:x` -> `/`. */
export function routePrefix(path: string): string {
  const fixed: string[] = [];
  for (const segment of segmentsOf(path)) {
    if (isVariable(segment)) break;
    fixed.push(segment);
  }
  return `/${fixed.join("/")}`;
}

/** The Router's matching rule: the longest prefix that the path equals or continues with `/`. */
export function matchPrefix(prefixes: RouterPrefix[], path: string): RouterPrefix | undefined {
  let best: RouterPrefix | undefined;
  for (const candidate of prefixes) {
    const { prefix } = candidate;
    const matches =
      path.startsWith(prefix) &&
      (path.length === prefix.length || prefix === "/" || prefix.endsWith("/") || path[prefix.length] === "/");
    if (matches && (!best || prefix.length > best.prefix.length)) best = candidate;
  }
  return best;
}

export function routerPrefixes(families: RouteFamily[]): RouterPrefix[] {
  const owners = new Map<string, string>();
  for (const family of families) {
    for (const route of family.routes) {
      const prefix = routePrefix(route.path);
      const owner = owners.get(prefix);
      if (owner && owner !== family.name) {
        throw new Error(
          `route families '${owner}' and '${family.name}' both need the router prefix ${prefix}: ` +
            "give one of them a distinct fixed path segment before its first parameter",
        );
      }
      owners.set(prefix, family.name);
    }
  }
  const prefixes = [...owners].map(([prefix, family]) => ({ prefix, family }));

  for (const family of families) {
    for (const route of family.routes) {
      // A catch-all route (RouteSpec.catchAll) is meant to get only what longer prefixes leave to it.
      if (route.catchAll) continue;
      const own = routePrefix(route.path);
      const thief = prefixes.find(
        (other) =>
          other.family !== family.name && other.prefix.length > own.length && couldCapture(other.prefix, route.path),
      );
      if (thief) {
        throw new Error(
          `the router prefix ${thief.prefix} of family '${thief.family}' would capture requests for ` +
            `${route.method} ${route.path} of family '${family.name}'`,
        );
      }
    }
  }
  return withoutRedundant(prefixes);
}

/** Drops, one at a time, each prefix whose paths would still reach the same family without it. */
function withoutRedundant(prefixes: RouterPrefix[]): RouterPrefix[] {
  const kept = [...prefixes].sort((a, b) => b.prefix.length - a.prefix.length);
  for (const candidate of [...kept]) {
    const others = kept.filter((entry) => entry !== candidate);
    if (matchPrefix(others, candidate.prefix)?.family === candidate.family) kept.splice(kept.indexOf(candidate), 1);
  }
  return kept.sort((a, b) => a.prefix.localeCompare(b.prefix));
}

/** Could some concrete path of `routePath` start with `prefix` (at a segment boundary)? */
function couldCapture(prefix: string, routePath: string): boolean {
  const route = segmentsOf(routePath);
  const wanted = segmentsOf(prefix);
  for (const [index, segment] of wanted.entries()) {
    const pattern = route[index];
    if (pattern === undefined) return false;
    if (pattern.includes("*")) return true;
    if (!isVariable(pattern) && pattern !== segment) return false;
  }
  return true;
}

function segmentsOf(path: string): string[] {
  return path.split("/").filter(Boolean);
}

function isVariable(segment: string): boolean {
  return segment.startsWith(":") || segment.includes("*");
}
