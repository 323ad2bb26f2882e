/**
 * The shape of the route table (core/routes/table.ts): the app, the log writer and infra read routes through
 * these types, so they live in the HTTP layer, which routes/ builds on: nothing imports upward into routes/.
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
  /**
   * For resources that exist at two levels (guardrails): the scope of their organisation-level kind. The app
   * then admits a caller holding `scope` or this one, and the service checks the one its resource needs.
   */
  organisationScope?: string;
  /** Body limit class: `json` (GATEWAY_MAX_JSON_BODY_BYTES) or `upload` (GATEWAY_MAX_UPLOAD_BYTES). */
  body?: "json" | "upload";
  /**
   * A catch-all (`/v1/*`): it gets only the requests no other route matches. The app mounts catch-alls after
   * every other route, and the AWS Router's longest-prefix rule gives every other family's prefix precedence.
   */
  catchAll?: true;
  /**
   * An inference route inside a control-plane family (a saved prompt's completions): analytics count it like
   * the data-plane families' routes.
   */
  inference?: true;
  /**
   * Callable from web pages of any origin (OAuth discovery, registration and token endpoints, the MCP endpoint):
   * the app answers the browser's CORS preflight for its path and makes its answers readable cross-origin. Only
   * for routes whose callers authenticate with headers they set themselves, never with cookies.
   */
  cors?: true;
  /**
   * The wire shape of the route's error answers when it speaks another vendor's API (core/http/error-shapes.ts):
   * `anthropic` (Messages), `gemini` (generateContent). OpenAI's shape when absent.
   */
  errors?: "anthropic" | "gemini";
}

export interface RouteFamily {
  name: string;
  /** True for families that serve inference traffic (hot path; bundle size and cold start matter most). */
  dataPlane: boolean;
  /** Lambda timeout in seconds (streamed answers can be long). */
  timeoutSeconds: number;
  /**
   * Where the family runs on AWS. `lambda` (the default): one function per family (infra/api.ts).
   * `container`: a long-lived service instead, for what a Lambda cannot hold (the realtime WebSocket proxy,
   * infra/realtime.ts); infra/api.ts makes no function for it and the Router sends its prefixes to the service.
   * `static`: static files the Router serves from a bucket (the web console, infra/console.ts); no function.
   */
  platform?: "lambda" | "container" | "static";
  routes: RouteSpec[];
}
