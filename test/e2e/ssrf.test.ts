import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalGateway, startLocalGateway } from "../../core/platform/local/gateway.ts";

/**
 * SSRF through values that build host names (Bedrock / Vertex regions, Azure resource names, Vertex projects)
 * and through saved custom hosts, with TRUSTED_CUSTOM_HOSTS unset: a mock listens on 127.0.0.1 and must see no
 * request through any provider path. Bad values answer 400 naming the field.
 */

let target: Server;
let port: number;
let reached = 0;
let dataDir: string;
let gateway: LocalGateway;
let adminKey: string;

const start = (trusted: string) =>
  startLocalGateway({ PORT: "0", HOST: "127.0.0.1", GATEWAY_DATA_DIR: dataDir, TRUSTED_CUSTOM_HOSTS: trusted });

beforeAll(async () => {
  target = createServer((_req, res) => {
    reached++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end("{}");
  });
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  port = (target.address() as AddressInfo).port;
  dataDir = mkdtempSync(join(tmpdir(), "gateway-ssrf-"));
  // A saved integration pointing at loopback, made while loopback was trusted...
  const trusting = await start("127.0.0.1");
  adminKey = trusting.bootstrap.adminApiKey!;
  const created = await fetch(`${trusting.url}/v1/integrations`, {
    method: "POST",
    headers: { "x-gateway-api-key": adminKey, "content-type": "application/json" },
    body: JSON.stringify({
      name: "loopback",
      slug: "loopback",
      ai_provider_id: "openai",
      key: "sk-loopback-secret-1234",
      configurations: { custom_host: `http://127.0.0.1:${port}/v1` },
    }),
  });
  expect(created.status).toBe(201);
  await trusting.close();
  // ...then the same data with TRUSTED_CUSTOM_HOSTS unset.
  gateway = await start("");
});

afterAll(async () => {
  await gateway?.close();
  await new Promise<void>((resolve) => target.close(() => resolve()));
  rmSync(dataDir, { recursive: true, force: true });
});

const evil = () => `x@127.0.0.1:${port}/`;

async function chat(headers: Record<string, string>): Promise<{ status: number; error: any }> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "x-gateway-api-key": adminKey, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "anthropic.claude-3-haiku", messages: [{ role: "user", content: "hi" }] }),
  });
  return { status: response.status, error: ((await response.json()) as any).error };
}

const AWS = { "x-gateway-aws-access-key-id": "AKIAEXAMPLE", "x-gateway-aws-secret-access-key": "secret" };

describe("host names built from caller values", () => {
  it("answers 400 naming the header for a region, resource name or project that is not one", async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ "x-gateway-provider": "bedrock", ...AWS, "x-gateway-aws-region": evil() }, "x-gateway-aws-region"],
      [
        { "x-gateway-provider": "bedrock", ...AWS, "x-portkey-aws-region": "x@169.254.169.254/" },
        "x-gateway-aws-region",
      ],
      [
        { "x-gateway-provider": "azure-openai", authorization: "Bearer k", "x-gateway-azure-resource-name": evil() },
        "x-gateway-azure-resource-name",
      ],
      [
        { "x-gateway-provider": "vertex-ai", authorization: "Bearer t", "x-gateway-vertex-region": evil() },
        "x-gateway-vertex-region",
      ],
      [
        {
          "x-gateway-provider": "vertex-ai",
          authorization: "Bearer t",
          "x-gateway-vertex-project-id": `p@127.0.0.1:${port}`,
        },
        "x-gateway-vertex-project-id",
      ],
    ];
    for (const [headers, param] of cases) {
      const { status, error } = await chat(headers);
      expect(status, param).toBe(400);
      expect(error.param, param).toBe(param);
      expect(error.type, param).toBe("invalid_request_error");
    }
    expect(reached).toBe(0);
  });

  it("answers 400 naming the config field for an inline config", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { provider: "bedrock", aws_access_key_id: "AKIA", aws_secret_access_key: "s", aws_region: evil() },
        "x-gateway-config.aws_region",
      ],
      [{ provider: "azure-openai", api_key: "k", resource_name: evil() }, "x-gateway-config.resource_name"],
      [
        { strategy: { mode: "fallback" }, targets: [{ provider: "vertex-ai", api_key: "t", vertexRegion: evil() }] },
        "x-gateway-config.targets[0].vertex_region",
      ],
    ];
    for (const [config, param] of cases) {
      const { status, error } = await chat({ "x-gateway-config": JSON.stringify(config) });
      expect(status, param).toBe(400);
      expect(error.param, param).toBe(param);
    }
    expect(reached).toBe(0);
  });

  it("refuses the same values in a saved integration and a saved config", async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${gateway.url}${path}`, {
        method: "POST",
        headers: { "x-gateway-api-key": adminKey, "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(async (response) => ({ status: response.status, error: ((await response.json()) as any).error }));
    const integration = await post("/v1/integrations", {
      name: "bad region",
      slug: "bad-region",
      ai_provider_id: "bedrock",
      configurations: { aws_access_key_id: "AKIA", aws_secret_access_key: "s", aws_region: evil() },
    });
    expect(integration.status).toBe(400);
    expect(integration.error.param).toBe("configurations.aws_region");
    const azure = await post("/v1/integrations", {
      name: "bad resource",
      slug: "bad-resource",
      ai_provider_id: "azure-openai",
      key: "k",
      configurations: { azure_resource_name: evil() },
    });
    expect(azure.status).toBe(400);
    expect(azure.error.param).toBe("configurations.azure_resource_name");
    const config = await post("/v1/configs", {
      name: "bad",
      config: { provider: "bedrock", aws_region: "x@169.254.169.254/" },
    });
    expect(config.status).toBe(400);
    expect(config.error.param).toBe("config.aws_region");
  });
});

describe("saved custom hosts", () => {
  it("are checked when used: an integration saved while loopback was trusted no longer reaches it", async () => {
    const { status, error } = await chat({ "x-gateway-provider": "@loopback" });
    expect(status).toBe(400);
    expect(error.code).toBe("invalid_custom_host");
    expect(error.param).toBe("configurations.custom_host");
    const viaConfig = await chat({ "x-gateway-config": JSON.stringify({ provider: "@loopback" }) });
    expect(viaConfig.status).toBe(400);
    expect(reached).toBe(0);
  });
});
