import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatCompletionRequest } from "../../core/inference/gateway/schemas/chat.ts";
import { completionRequest } from "../../core/inference/gateway/schemas/completions.ts";
import { embeddingRequest } from "../../core/inference/gateway/schemas/embeddings.ts";
import { openApiPath, routeKey } from "../../core/routes/openapi/document.ts";
import { REQUEST_BODIES } from "../../core/routes/openapi/request-bodies.ts";
import { ROUTE_FAMILIES } from "../../core/routes/table.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";

/**
 * GET /v1/openapi.json: an OpenAPI 3.1 document of every route of the table, served without a key by the
 * running gateway, whose request bodies are the zod schemas the routes validate with.
 */

let gateway: TestGateway;
let document: any;

beforeAll(async () => {
  gateway = await startTestGateway();
  const response = await fetch(`${gateway.url}/v1/openapi.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("application/json");
  document = await response.json();
});

afterAll(async () => {
  await gateway?.close();
});

const ALL_ROUTES = ROUTE_FAMILIES.flatMap((family) => family.routes.map((route) => ({ family: family.name, route })));
const bodySchema = (path: string, method = "post") =>
  document.paths[path][method].requestBody.content["application/json"].schema;

describe("GET /v1/openapi.json", () => {
  it("is served without an API key, as an OpenAPI 3.1 document with the gateway's security schemes", () => {
    expect(document.openapi).toBe("3.1.0");
    expect(document.info.title).toEqual(expect.any(String));
    expect(document.components.securitySchemes).toEqual({
      gatewayApiKey: { type: "apiKey", in: "header", name: "x-gateway-api-key" },
      bearerJwt: expect.objectContaining({ type: "http", scheme: "bearer", bearerFormat: "JWT" }),
    });
  });

  it("lists every route of the table with its method, security and required scope, and nothing else", () => {
    const listed: string[] = [];
    for (const [path, operations] of Object.entries<any>(document.paths)) {
      for (const method of Object.keys(operations)) listed.push(`${method.toUpperCase()} ${path}`);
    }
    expect(listed.sort()).toEqual(ALL_ROUTES.map(({ route }) => `${route.method} ${openApiPath(route.path)}`).sort());

    for (const { family, route } of ALL_ROUTES) {
      const operation = document.paths[openApiPath(route.path)][route.method.toLowerCase()];
      expect(operation.tags, routeKey(route)).toEqual([family]);
      expect(operation.security, routeKey(route)).toEqual(
        route.auth === "api_key" ? [{ gatewayApiKey: [] }, { bearerJwt: [] }] : [],
      );
      expect(operation["x-required-scope"], routeKey(route)).toBe(route.scope);
      // Routes that speak another vendor's API answer errors in its shape (RouteSpec.errors).
      const shapes: Record<string, string> = { anthropic: "AnthropicError", gemini: "GoogleError" };
      const errorSchema = route.errors ? shapes[route.errors]! : "Error";
      expect(operation.responses.default.content["application/json"].schema, routeKey(route)).toEqual({
        $ref: `#/components/schemas/${errorSchema}`,
      });
      expect(document.components.schemas[errorSchema]).toBeDefined();
    }
    const operationIds = listed.map((entry) => {
      const [method, path] = entry.split(" ");
      return document.paths[path!][method!.toLowerCase()].operationId;
    });
    expect(new Set(operationIds).size).toBe(operationIds.length);
  });

  it("has the OpenAI-shaped paths, with path parameters declared", () => {
    for (const path of ["/v1/chat/completions", "/v1/completions", "/v1/embeddings"]) {
      expect(document.paths[path].post.security).toEqual([{ gatewayApiKey: [] }, { bearerJwt: [] }]);
    }
    expect(document.paths["/v1/models"].get).toBeDefined();
    expect(document.paths["/v1/openapi.json"].get.security).toEqual([]);
    expect(document.paths["/v1/configs/{id}"].get.parameters).toEqual([
      { name: "id", in: "path", required: true, schema: { type: "string" } },
    ]);
    expect(document.paths["/v1/configs/{id}"].get["x-required-scope"]).toBe("configs.read");
  });

  it("describes the chat, completions and embeddings bodies with the routes' own zod schemas", () => {
    expect(REQUEST_BODIES[routeKey({ method: "POST", path: "/v1/chat/completions" })]).toBe(chatCompletionRequest);
    expect(REQUEST_BODIES[routeKey({ method: "POST", path: "/v1/completions" })]).toBe(completionRequest);
    expect(REQUEST_BODIES[routeKey({ method: "POST", path: "/v1/embeddings" })]).toBe(embeddingRequest);

    const chat = bodySchema("/v1/chat/completions");
    expect(chat.required).toEqual(expect.arrayContaining(["messages", "model"]));
    expect(chat.properties.temperature).toBeDefined();
    expect(bodySchema("/v1/completions").required).toEqual(expect.arrayContaining(["model", "prompt"]));
    expect(bodySchema("/v1/embeddings").properties.encoding_format.enum).toEqual(["float", "base64"]);
  });

  it("documents bodies a JSON Schema validator judges as the gateway does", async () => {
    const ajv = new Ajv2020({ strict: false });
    const validChat = ajv.compile(bodySchema("/v1/chat/completions"));
    const good = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }], temperature: 0.5 };
    const bad = { ...good, temperature: 3 };
    expect(validChat(good)).toBe(true);
    expect(validChat(bad)).toBe(false);
    expect(validChat({ model: "gpt-4o-mini", messages: [] })).toBe(false);

    // The gateway refuses the same body before calling any provider.
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "x-gateway-api-key": gateway.adminKey, "content-type": "application/json" },
      body: JSON.stringify(bad),
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error.param).toBe("temperature");

    const validEmbeddings = ajv.compile(bodySchema("/v1/embeddings"));
    expect(validEmbeddings({ model: "text-embedding-3-small", input: "hello" })).toBe(true);
    expect(validEmbeddings({ model: "text-embedding-3-small" })).toBe(false);
  });

  it("names in REQUEST_BODIES only routes of the table that take a JSON body", () => {
    const jsonRoutes = new Set(
      ALL_ROUTES.filter(({ route }) => route.body === "json").map(({ route }) => routeKey(route)),
    );
    for (const key of Object.keys(REQUEST_BODIES)) expect(jsonRoutes, key).toContain(key);
  });
});
