/**
 * THE route table: route family -> routes. The local server mounts every family, infra/api.ts creates one
 * Lambda function per family and routes its paths to it, and tests check both. Nothing else lists routes.
 * Pure data, so infra and tests can read it without loading any handler code.
 */

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface RouteSpec {
  method: Method;
  /** Hono path syntax: `:param` for one segment, `*` for the rest. */
  path: string;
  /** Name of the handler in the family's handler module (core/routes/handlers/<family>.ts). */
  handler: string;
  /** `api_key`: x-gateway-api-key or a JWT is required. `none`: public. */
  auth: "api_key" | "none";
  /**
   * The scope a caller must hold (checked centrally by the app before the handler runs; `*` holds all).
   * Data-plane routes usually need none beyond a valid key.
   */
  scope?: string;
  /** Body limit class: `json` (GATEWAY_MAX_JSON_BODY_BYTES) or `upload` (GATEWAY_MAX_UPLOAD_BYTES). */
  body?: "json" | "upload";
  /**
   * A catch-all (`/v1/*`): it gets only the requests no other route matches. The app mounts catch-alls after
   * every other route, and the AWS Router's longest-prefix rule gives every other family's prefix precedence.
   */
  catchAll?: true;
}

export interface RouteFamily {
  name: string;
  /** True for families that serve inference traffic (hot path; bundle size and cold start matter most). */
  dataPlane: boolean;
  /** Lambda timeout in seconds (streamed answers can be long). */
  timeoutSeconds: number;
  routes: RouteSpec[];
}

const PASSTHROUGH_METHODS = ["POST", "GET", "PUT", "DELETE"] as const;

export const ROUTE_FAMILIES: RouteFamily[] = [
  {
    name: "health",
    dataPlane: false,
    timeoutSeconds: 10,
    routes: [
      { method: "GET", path: "/health", handler: "health", auth: "none" },
      { method: "GET", path: "/v1/health", handler: "health", auth: "none" },
    ],
  },
  {
    name: "chat",
    dataPlane: true,
    timeoutSeconds: 900,
    routes: [
      { method: "POST", path: "/v1/chat/completions", handler: "chatCompletions", auth: "api_key", body: "json" },
    ],
  },
  {
    name: "completions",
    dataPlane: true,
    timeoutSeconds: 900,
    routes: [{ method: "POST", path: "/v1/completions", handler: "completions", auth: "api_key", body: "json" }],
  },
  {
    name: "embeddings",
    dataPlane: true,
    timeoutSeconds: 300,
    routes: [{ method: "POST", path: "/v1/embeddings", handler: "embeddings", auth: "api_key", body: "json" }],
  },
  {
    name: "models",
    dataPlane: true,
    timeoutSeconds: 30,
    routes: [{ method: "GET", path: "/v1/models", handler: "listModels", auth: "api_key" }],
  },
  {
    // Generic pass-through (spec 4.7): /v1/proxy/* always forwards raw; /v1/* forwards whatever no dedicated
    // route handles. Configs, retries, custom-host checks and auth apply as on every other route.
    name: "passthrough",
    dataPlane: true,
    timeoutSeconds: 900,
    routes: [
      ...PASSTHROUGH_METHODS.map((method): RouteSpec => ({ method, path: "/v1/proxy/*", handler: "proxy", auth: "api_key", body: "upload" })),
      ...PASSTHROUGH_METHODS.map((method): RouteSpec => ({ method, path: "/v1/*", handler: "passthrough", auth: "api_key", body: "upload", catchAll: true })),
    ],
  },
  {
    name: "logs",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      { method: "GET", path: "/v1/logs", handler: "listLogs", auth: "api_key", scope: "logs.list" },
      { method: "POST", path: "/v1/logs", handler: "createLog", auth: "api_key", body: "json", scope: "logs.write" },
      { method: "GET", path: "/v1/logs/:id", handler: "getLog", auth: "api_key", scope: "logs.view" },
    ],
  },
];

export const familyByName = (name: string): RouteFamily => {
  const family = ROUTE_FAMILIES.find((candidate) => candidate.name === name);
  if (!family) throw new Error(`unknown route family ${name}`);
  return family;
};
