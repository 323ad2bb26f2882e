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

const ERROR_RESPONSE = {
  description: "An error in OpenAI's shape",
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
};

/** What a successful answer of the family's routes is, as far as the table tells. */
function successResponse(family: RouteFamily): JsonObject {
  if (family.name === "passthrough")
    return { description: "The provider's answer, status, headers and body unchanged" };
  if (family.name === "chat" || family.name === "completions") {
    return {
      description: "The completion: JSON, or server-sent events when the body sets `stream: true`",
      content: {
        "application/json": { schema: { type: "object" } },
        "text/event-stream": { schema: { type: "string" } },
      },
    };
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

function operation(family: RouteFamily, route: RouteSpec, template: string, operationId: string): JsonObject {
  const parameters = pathParameters(template).map((name) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
    ...(name === "path" && route.path.endsWith("*") ? { description: "The rest of the path (may hold slashes)" } : {}),
  }));
  const body = requestBody(route);
  return {
    operationId,
    tags: [family.name],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: { "200": successResponse(family), default: ERROR_RESPONSE },
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
