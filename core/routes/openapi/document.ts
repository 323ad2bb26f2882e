import { toJSONSchema } from "zod";
import type * as z from "zod/v4/core";
import { ROUTE_FAMILIES, type RouteFamily, type RouteSpec } from "../table.ts";
import { REQUEST_BODIES } from "./request-bodies.ts";

/**
 * The OpenAPI 3.1 document of the gateway (GET /v1/openapi.json), made from the route table and the zod schemas
 * the handlers validate bodies with: the API it describes is the one that is mounted, route for route.
 */

type JsonObject = Record<string, unknown>;

/** The name a route is listed under in `REQUEST_BODIES`: its method and its path as the table writes it. */
export const routeKey = (route: Pick<RouteSpec, "method" | "path">) => `${route.method} ${route.path}`;

/** Hono path syntax to an OpenAPI path template: `:id` -> `{id}`, a trailing `*` -> `{path}` (the rest). */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)(\{[^}]*\})?/g, "{$1}").replace(/\*$/, "{path}");
}

const pathParameters = (template: string) => [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);

/** A route's error answers, in the shape of the API it speaks (RouteSpec.errors). */
function errorResponse(route: RouteSpec): JsonObject {
  if (route.errors === "anthropic") {
    return {
      description: "An error in Anthropic's shape",
      content: { "application/json": { schema: { $ref: "#/components/schemas/AnthropicError" } } },
    };
  }
  if (route.errors === "gemini") {
    return {
      description: "An error in Google's shape",
      content: { "application/json": { schema: { $ref: "#/components/schemas/GoogleError" } } },
    };
  }
  return {
    description: "An error in OpenAI's shape",
    content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
  };
}

/** An answer that is JSON, or server-sent events when the request streams. */
const JSON_OR_EVENTS = (description: string) => ({
  description,
  content: {
    "application/json": { schema: { type: "object" } },
    "text/event-stream": { schema: { type: "string" } },
  },
});

/** What a successful answer of the family's routes is, as far as the table tells. */
function successResponse(family: RouteFamily, route: RouteSpec): JsonObject {
  if (family.name === "passthrough")
    return { description: "The provider's answer, status, headers and body unchanged" };
  if (family.name === "chat" || family.name === "completions") {
    return JSON_OR_EVENTS("The completion: JSON, or server-sent events when the body sets `stream: true`");
  }
  if (family.name === "messages") return JSON_OR_EVENTS("Anthropic's Message, or its stream events");
  if (route.errors === "gemini") {
    return JSON_OR_EVENTS(
      "Gemini's GenerateContentResponse; :streamGenerateContent streams its chunks as server-sent events with " +
        "`?alt=sse`, else as one JSON array; :countTokens answers `{totalTokens}`",
    );
  }
  if (family.name === "metrics") return { description: "Prometheus metrics", content: { "text/plain": {} } };
  if (family.name === "blobs") return { description: "The blob's bytes", content: { "application/octet-stream": {} } };
  return { description: "OK", content: { "application/json": { schema: { type: "object" } } } };
}

function requestBody(route: RouteSpec): JsonObject | undefined {
  if (route.body === "upload") {
    return { description: "Forwarded as it is", content: { "*/*": { schema: {} } } };
  }
  const schema = REQUEST_BODIES[routeKey(route)];
  if (!schema && route.body !== "json") return undefined;
  return {
    required: route.body === "json" && schema !== undefined,
    content: { "application/json": { schema: schema ? bodySchema(schema) : { type: "object" } } },
  };
}

/** A request schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect), as a client must send it (zod's input side). */
function bodySchema(schema: z.$ZodType): JsonObject {
  const { $schema: _dialect, ...jsonSchema } = toJSONSchema(schema, {
    target: "draft-2020-12",
    io: "input",
    // Refinements (e.g. `best_of` above `n`) are not JSON Schema; the document keeps the shape they refine.
    unrepresentable: "any",
  }) as JsonObject;
  return jsonSchema;
}

function pathDescription(route: RouteSpec): string {
  if (route.errors === "gemini") {
    return "`{model}:generateContent`, `{model}:streamGenerateContent` or `{model}:countTokens` (the model may hold slashes)";
  }
  return "The rest of the path (may hold slashes)";
}

function operation(family: RouteFamily, route: RouteSpec, template: string, operationId: string): JsonObject {
  const parameters = pathParameters(template).map((name) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
    ...(name === "path" && route.path.endsWith("*") ? { description: pathDescription(route) } : {}),
  }));
  const body = requestBody(route);
  return {
    operationId,
    tags: [family.name],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: { "200": successResponse(family, route), default: errorResponse(route) },
    security: route.auth === "api_key" ? [{ gatewayApiKey: [] }, { bearerJwt: [] }] : [],
    ...(route.scope ? { "x-required-scope": route.scope } : {}),
    ...(route.organisationScope ? { "x-organisation-scope": route.organisationScope } : {}),
    ...(route.catchAll ? { "x-catch-all": true } : {}),
    "x-route-family": family.name,
    "x-data-plane": family.dataPlane,
  };
}

export function buildOpenApiDocument(families: RouteFamily[] = ROUTE_FAMILIES): JsonObject {
  const paths: Record<string, JsonObject> = {};
  const operationIds = new Set<string>();
  for (const family of families) {
    for (const route of family.routes) {
      const template = openApiPath(route.path);
      // A handler can serve several paths (`/health` and `/v1/health`): the first keeps its name.
      let operationId = route.handler;
      for (let n = 2; operationIds.has(operationId); n++) operationId = `${route.handler}${n}`;
      operationIds.add(operationId);
      paths[template] ??= {};
      paths[template][route.method.toLowerCase()] = operation(family, route, template, operationId);
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "AI Gateway",
      version: "1",
      description:
        "One OpenAI-compatible API in front of many model providers, and the control plane that configures it. " +
        "Every `x-gateway-*` request header is also accepted as `x-portkey-*`.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    tags: families.map((family) => ({ name: family.name })),
    paths,
    components: {
      securitySchemes: {
        gatewayApiKey: { type: "apiKey", in: "header", name: "x-gateway-api-key" },
        bearerJwt: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "A JWT checked against the configured JWKS (GATEWAY_JWT_JWKS or GATEWAY_JWT_JWKS_URL)",
        },
      },
      schemas: {
        AnthropicError: {
          type: "object",
          required: ["type", "error"],
          properties: {
            type: { const: "error" },
            error: {
              type: "object",
              required: ["type", "message"],
              properties: { type: { type: "string" }, message: { type: "string" } },
            },
          },
        },
        GoogleError: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["code", "message", "status"],
              properties: { code: { type: "integer" }, message: { type: "string" }, status: { type: "string" } },
            },
          },
        },
        Error: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["message", "type", "param", "code"],
              properties: {
                message: { type: "string" },
                type: { type: "string" },
                param: { type: ["string", "null"] },
                code: { type: ["string", "null"] },
              },
            },
          },
        },
      },
    },
  };
}

let cached: string | undefined;

/** The document as JSON text, built on first use and kept: the route table does not change while running. */
export function openApiJson(): string {
  cached ??= JSON.stringify(buildOpenApiDocument());
  return cached;
}
