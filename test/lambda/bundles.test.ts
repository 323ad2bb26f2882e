import { randomUUID } from "node:crypto";
import { readdirSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { StreamingLambdaHandler } from "../../core/platform/aws/function-url-handler.ts";
import { ROUTE_FAMILIES } from "../../core/routes/table.ts";
import { LAMBDA_NODEJS } from "../../infra/lambda-bundle.ts";
import { sstBundle } from "../aws-shape/function-bundles.ts";
import { lambdaEnv } from "../helpers/aws-stores.ts";
import { startMockServer } from "../helpers/mock-server.ts";
import { silentWav } from "../helpers/wav.ts";
import { createAwsStores } from "../../core/platform/aws/aws-stores.ts";
import { ensureOrganisation } from "../../core/control/organisation/bootstrap.ts";
import { mcpIntegrationStore, mcpServerStore } from "../../core/features/mcp/records.ts";
import { startMcpUpstream } from "../helpers/mcp-upstream.ts";
import { TEST_CREDENTIALS, TEST_REGION } from "../setup/emulators.ts";
import { startOpenAIMock, type OpenAIMock } from "../mocks/openai.ts";
import { installRecordingSst } from "../infra/recording-sst.ts";
import { createTable } from "../setup/emulators.ts";
import { installAwsLambdaGlobal, invoke } from "./awslambda-runtime.ts";
import { functionUrlEvent } from "./fake-app.ts";

/**
 * What is deployed is what is tested: every Lambda entry (functions/*.ts, functions/workers/*.ts) is bundled
 * with the options the SST definition gives it (read from sst.config.ts evaluated against a recording
 * stand-in of sst.aws.*, turned into esbuild options as SST does: infra/lambda-bundle.ts), the bundle is
 * loaded, and invoked once: route families through the streaming adapter with a function-URL event, workers
 * with an event of their source. The stores are the emulators of the test run.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const ADMIN_KEY = `gk-bundle-${randomUUID()}`;
const savedEnv = { ...process.env };

interface DeployedFunction {
  /** functions/chat.ts */
  entry: string;
  nodejs: unknown;
}

let deployed: DeployedFunction[];
let upstream: OpenAIMock;
let tableName: string;

function entriesOnDisk(): string[] {
  const entries: string[] = [];
  for (const dir of ["functions", "functions/workers"]) {
    for (const file of readdirSync(join(ROOT, dir))) {
      if (file.endsWith(".ts") && statSync(join(ROOT, dir, file)).isFile()) entries.push(`${dir}/${file}`);
    }
  }
  return entries.sort();
}

beforeAll(async () => {
  const recording = installRecordingSst();
  const config = (await import("../../sst.config.ts")).default;
  await config.run();
  const handlers = [
    ...recording.of("Function").map((fn) => fn.args),
    ...recording.subscriptions.map((subscription) => subscription.subscriber),
    ...recording.streamSubscriptions.map((subscription) => subscription.subscriber),
    ...recording.of("Cron").map((cron) => cron.args.function),
  ];
  deployed = handlers.map((args) => ({
    entry: `${String(args.handler).replace(/\.handler$/, "")}.ts`,
    nodejs: args.nodejs,
  }));

  const emulators = inject("emulators");
  tableName = `bundles-${randomUUID()}`;
  await createTable(emulators.dynamodb, tableName);
  Object.assign(process.env, {
    ...lambdaEnv(emulators, tableName),
    GATEWAY_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY,
    // The mock upstream listens on loopback.
    TRUSTED_CUSTOM_HOSTS: "127.0.0.1",
  });
  installAwsLambdaGlobal();
  upstream = await startOpenAIMock({ reply: "Hello from the bundled chat function." });
});

afterAll(async () => {
  process.env = savedEnv;
  await upstream?.close();
});

/** Bundles one entry as SST does with these `nodejs` options (cached, shared with the AWS shape); its entry chunk. */
const bundle = (entry: string, nodejs: any): Promise<string> => sstBundle(entry, nodejs);

const json = (bytes: Uint8Array) => JSON.parse(Buffer.from(bytes).toString("utf8"));

describe("the SST definition", () => {
  it("deploys every functions/ entry, each bundled with the shared options", () => {
    expect(deployed.map((fn) => fn.entry).sort()).toEqual(entriesOnDisk());
    for (const fn of deployed) expect(fn.nodejs, fn.entry).toEqual(LAMBDA_NODEJS);
  });
});

describe("every Lambda bundle answers through its adapter", () => {
  // Container families (the realtime WebSocket proxy) have no Lambda: test/e2e/realtime-service.test.ts.
  for (const family of ROUTE_FAMILIES.filter((candidate) => (candidate.platform ?? "lambda") === "lambda")) {
    it(`functions/${family.name}.ts`, async () => {
      const fn = deployed.find((candidate) => candidate.entry === `functions/${family.name}.ts`)!;
      const { handler } = (await import(pathToFileURL(await bundle(fn.entry, fn.nodejs)).href)) as {
        handler: StreamingLambdaHandler;
      };
      if (family.name === "health") {
        const result = await invoke(handler, functionUrlEvent("GET", "/health"));
        expect(result.prelude.statusCode).toBe(200);
        return;
      }
      if (family.name === "chat") {
        const result = await invoke(
          handler,
          functionUrlEvent("POST", "/v1/chat/completions", {
            headers: {
              "content-type": "application/json",
              "x-gateway-api-key": ADMIN_KEY,
              "x-gateway-provider": "openai",
              "x-gateway-custom-host": `${upstream.url}/v1`,
              authorization: "Bearer provider-key",
            },
            body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }),
          }),
        );
        expect(result.prelude.statusCode, result.body.toString()).toBe(200);
        expect(json(result.body).choices[0].message.content).toBe("Hello from the bundled chat function.");
        return;
      }
      if (family.name === "mcp") {
        // No credentials: 401 with the OAuth protected-resource challenge.
        const initialize = JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "lambda", version: "1" } },
        });
        const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" };
        const anonymous = await invoke(
          handler,
          functionUrlEvent("POST", "/mcp/x", { headers: mcpHeaders, body: initialize }),
        );
        expect(anonymous.prelude.statusCode).toBe(401);
        expect(JSON.stringify(anonymous.prelude.headers)).toContain("resource_metadata=");
        // A tool call to a real MCP server (records seeded in this test's table), through the SDK in the bundle.
        const mcpUpstream = await startMcpUpstream();
        try {
          const emulators = inject("emulators");
          const stores = createAwsStores({
            tableName,
            bucketName: emulators.bucketName,
            queueUrls: emulators.queueUrls,
            masterKey: Buffer.alloc(32, 1),
            endpoints: { dynamodb: emulators.dynamodb, s3: emulators.fauxqs, sqs: emulators.fauxqs },
            region: TEST_REGION,
            credentials: TEST_CREDENTIALS,
          });
          const { organisationId, defaultWorkspaceId } = await ensureOrganisation(stores.records);
          const integration = await mcpIntegrationStore(stores.records).create(organisationId, {
            slug: "lambda-mcp-upstream",
            name: "Upstream",
            url: mcpUpstream.url,
            transport: "http",
            auth_type: "none",
            configurations: {},
            capabilities: [{ type: "tool", name: "echo", enabled: true }],
            server_info: {},
            workspaces: [],
            global_workspace_access: true,
          });
          await mcpServerStore(stores.records).create(organisationId, {
            slug: "lambda-mcp",
            workspaceId: defaultWorkspaceId,
            name: "Lambda MCP",
            mcp_integration_id: integration.id,
            capability_overrides: {},
            default_user_access: "allow",
            user_access: [],
          });
          const call = await invoke(
            handler,
            functionUrlEvent("POST", "/mcp/lambda-mcp", {
              headers: { ...mcpHeaders, "x-gateway-api-key": ADMIN_KEY, "mcp-protocol-version": "2025-06-18" },
              body: JSON.stringify({
                jsonrpc: "2.0",
                id: 2,
                method: "tools/call",
                params: { name: "echo", arguments: { text: "from lambda" } },
              }),
            }),
          );
          expect(call.prelude.statusCode, call.body.toString()).toBe(200);
          expect(call.body.toString()).toContain("echo: from lambda");
        } finally {
          await mcpUpstream.close();
        }
        const registry = await invoke(
          handler,
          functionUrlEvent("GET", "/v0.1/servers", { headers: { "x-gateway-api-key": ADMIN_KEY } }),
        );
        expect(registry.prelude.statusCode).toBe(200);
        expect(json(registry.body).servers.map((entry: any) => entry.server.name)).toContain("ai-gateway/lambda-mcp");
        return;
      }
      if (family.name === "audio") {
        // A multipart body (base64 in the function URL event) in, the audio's duration read in the bundle.
        const media = await startMockServer((_request, response) => {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify({ text: "bundled transcript" }));
        });
        try {
          const form = new FormData();
          form.append("model", "whisper-1");
          form.append("file", new Blob([silentWav(2)], { type: "audio/wav" }), "a.wav");
          const encoded = new Response(form);
          const body = Buffer.from(await encoded.arrayBuffer()).toString("base64");
          const result = await invoke(
            handler,
            functionUrlEvent("POST", "/v1/audio/transcriptions", {
              headers: {
                "content-type": encoded.headers.get("content-type")!,
                "x-gateway-api-key": ADMIN_KEY,
                "x-gateway-provider": "openai",
                "x-gateway-custom-host": `${media.url}/v1`,
                authorization: "Bearer provider-key",
              },
              body,
              isBase64Encoded: true,
            }),
          );
          expect(result.prelude.statusCode, result.body.toString()).toBe(200);
          expect(json(result.body).text).toBe("bundled transcript");
          expect(media.requests[0]!.body.toString("latin1")).toContain('filename="a.wav"');
        } finally {
          await media.close();
        }
        return;
      }
      // Any other family: its first route refuses a request without a key (authentication ran in the bundle);
      // its first GET route without parameters answers 200 with the admin key.
      const route = family.routes.find((candidate) => candidate.auth === "api_key") ?? family.routes[0]!;
      const path = route.path.replace(/:\w+/g, "x").replace("*", "x");
      if (route.auth === "api_key") {
        const anonymous = await invoke(handler, functionUrlEvent(route.method, path));
        expect(anonymous.prelude.statusCode, `${route.method} ${path}`).toBe(401);
      }
      const list = family.routes.find(
        (candidate) => candidate.method === "GET" && !/[:*]/.test(candidate.path) && candidate.path !== "/v1/auth/self",
      );
      if (list) {
        const result = await invoke(
          handler,
          functionUrlEvent("GET", list.path, { headers: { "x-gateway-api-key": ADMIN_KEY } }),
        );
        // Metrics answer 404 when ENABLE_PROMETHEUS is off (as deployed by default), the Assistants API 400
        // missing_provider without a provider: still the family's handler.
        const expected = family.name === "metrics" ? 404 : family.name === "assistants" ? 400 : 200;
        expect(result.prelude.statusCode, `GET ${list.path}: ${result.body.toString().slice(0, 300)}`).toBe(expected);
      }
    });
  }

  for (const entry of entriesOnDisk().filter((file) => file.startsWith("functions/workers/"))) {
    it(entry, async () => {
      const fn = deployed.find((candidate) => candidate.entry === entry)!;
      const { handler } = (await import(pathToFileURL(await bundle(fn.entry, fn.nodejs)).href)) as {
        handler: (event: unknown) => Promise<any>;
      };
      if (basename(entry) === "analytics-stream.ts") {
        expect(await handler({ Records: [] })).toEqual({ batchItemFailures: [] });
        return;
      }
      if (basename(entry) === "scheduled.ts") {
        // An EventBridge scheduled event: every task runs once against the (empty) stores and none fails.
        expect(await handler({ "detail-type": "Scheduled Event", source: "aws.events", detail: {} })).toEqual({
          failed: [],
        });
        return;
      }
      // A message the consumer cannot use (no such job) is acknowledged, not retried forever.
      const answer = await handler({
        Records: [
          {
            messageId: "m1",
            receiptHandle: "r1",
            body: JSON.stringify({ id: "no-such-job", organisationId: "org_none" }),
            attributes: { ApproximateReceiveCount: "1" },
          },
        ],
      });
      expect(answer).toHaveProperty("batchItemFailures");
      expect(Array.isArray(answer.batchItemFailures)).toBe(true);
    });
  }
});
