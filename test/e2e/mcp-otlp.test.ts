import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { seedMcpServer } from "../helpers/mcp-records.ts";
import { type McpUpstream, startMcpUpstream } from "../helpers/mcp-upstream.ts";
import { type MockServer, startMockServer } from "../helpers/mock-server.ts";

/** MCP request logs exported to an OpenTelemetry collector (spec 6) as OTLP/HTTP JSON log records. */

let gateway: TestGateway;
let upstream: McpUpstream;
let collector: MockServer;
let callEcho: (traceId: string) => Promise<unknown>;

beforeAll(async () => {
  collector = await startMockServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  upstream = await startMcpUpstream({ requiredHeaders: { "x-upstream-key": "otlp-upstream-secret" } });
  gateway = await startTestGateway({
    OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.url}/otlp`,
    OTEL_EXPORTER_OTLP_HEADERS: "x-collector-token=abc%20123,x-tenant=acme",
    OTEL_BLRP_SCHEDULE_DELAY: "20",
    OTEL_SERVICE_NAME: "gateway-under-test",
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await collector?.close();
});

describe("OTLP export of MCP request logs", () => {
  it("posts each MCP log to the collector, batched, with the configured headers and no secrets or raw arguments", async () => {
    const workspace = await seedWorkspace(gateway, "OTLP");
    const key = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "otlp",
      workspace_id: workspace.id,
      scopes: ["*"],
    });
    const { server } = await seedMcpServer(gateway, {
      url: upstream.url,
      workspaceId: workspace.id,
      headers: { "x-upstream-key": "otlp-upstream-secret" },
    });
    callEcho = async (traceId: string) => {
      const client = new Client({ name: "otlp", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/${server.slug}`), {
          requestInit: { headers: { "x-gateway-api-key": key.key, "x-gateway-trace-id": traceId } },
        }),
      );
      const result = await client.callTool({ name: "echo", arguments: { text: "private words" } });
      await client.close();
      return result;
    };
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    await callEcho(traceId);

    const records = async () =>
      collector.requests.flatMap((request) =>
        request
          .json()
          .resourceLogs.flatMap((resource: any) =>
            resource.scopeLogs.flatMap((scope: any) =>
              scope.logRecords.map((record: any) => ({ ...record, service: resource.resource })),
            ),
          ),
      );
    let exported: any[] = [];
    for (let attempt = 0; attempt < 100 && !exported.some(isToolCall); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 30));
      exported = await records();
    }
    const toolCall = exported.find(isToolCall);
    expect(toolCall).toBeDefined();
    const request = collector.requests[0]!;
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/otlp/v1/logs");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["x-collector-token"]).toBe("abc 123");
    expect(request.headers["x-tenant"]).toBe("acme");
    expect(toolCall.service.attributes).toContainEqual({
      key: "service.name",
      value: { stringValue: "gateway-under-test" },
    });
    expect(toolCall.traceId).toBe(traceId);
    expect(toolCall.severityText).toBe("INFO");
    expect(toolCall.body).toEqual({ stringValue: "tools/call echo" });
    const attributes = Object.fromEntries(toolCall.attributes.map((a: any) => [a.key, Object.values(a.value)[0]]));
    expect(attributes).toMatchObject({
      "mcp.server.slug": server.slug,
      "mcp.method.name": "tools/call",
      "mcp.name": "echo",
      "http.response.status_code": "200",
    });
    expect(attributes["mcp.arguments.hash"]).toMatch(/^[0-9a-f]{64}$/);
    const everything = collector.requests.map((r) => r.body.toString("utf8")).join("\n");
    expect(everything).not.toContain("private words");
    expect(everything).not.toContain("otlp-upstream-secret");
    expect(everything).not.toContain(key.key);
    // The initialize and the tool call went out in the same few batches, not one post per record.
    expect(exported.length).toBeGreaterThanOrEqual(2);
  });

  it("a collector that is down never fails or slows an MCP call", async () => {
    const before = collector.requests.length;
    collector.handle((_request, response) => {
      response.destroy();
    });
    const result = (await callEcho(`otlp-down-${Date.now()}`)) as { content: unknown[] };
    expect(result.content).toEqual([{ type: "text", text: "echo: private words" }]);
    // The exporter did try (and failed quietly).
    for (let attempt = 0; attempt < 100 && collector.requests.length === before; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(collector.requests.length).toBeGreaterThan(before);
  });
});

function isToolCall(record: any): boolean {
  return record.body?.stringValue === "tools/call echo";
}
