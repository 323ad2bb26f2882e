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
  /** Body limit class: `json` (GATEWAY_MAX_JSON_BODY_BYTES) or `upload` (GATEWAY_MAX_UPLOAD_BYTES). */
  body?: "json" | "upload";
}

export interface RouteFamily {
  name: string;
  /** True for families that serve inference traffic (hot path; bundle size and cold start matter most). */
  dataPlane: boolean;
  /** Lambda timeout in seconds (streamed answers can be long). */
  timeoutSeconds: number;
  routes: RouteSpec[];
}

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
];

export const familyByName = (name: string): RouteFamily => {
  const family = ROUTE_FAMILIES.find((candidate) => candidate.name === name);
  if (!family) throw new Error(`unknown route family ${name}`);
  return family;
};
