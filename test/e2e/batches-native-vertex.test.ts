import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { costOf } from "../../core/inference/catalog/cost.ts";
import { gatewayClient, jsonl, parseLines, runBatchToEnd, uploadJsonl } from "../helpers/batches.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { startVertexBatchesMock, type VertexBatchesMock } from "../mocks/vertex-batches.ts";

/**
 * Vertex AI batch prediction end to end with the openai SDK: files.create -> batches.create with a Vertex target and
 * a Cloud Storage bucket (native by default) -> the input uploaded to the bucket as Gemini requests, the job polled
 * by the sweep -> the output file holds chat completions, failures in the error file, each line logged with its
 * cost at the batch discount.
 */

let gateway: TestGateway;
let vertex: VertexBatchesMock;
let workspaceKey: string;

const chatLine = (customId: string, content: string, model = "gemini-2.0-flash") => ({
  custom_id: customId,
  method: "POST",
  url: "/v1/chat/completions",
  body: { model, messages: [{ role: "user", content }] },
});

const vertexHeaders = () => ({
  "x-gateway-provider": "vertex-ai",
  "x-gateway-custom-host": vertex.url,
  "x-gateway-vertex-project-id": "e2e-project",
  "x-gateway-vertex-region": "us-east1",
  "x-gateway-vertex-storage-bucket": "e2e-batches",
});

const sdk = (headers: Record<string, string>) => gatewayClient(gateway, workspaceKey, headers, vertex.accessToken);
const upload = (lines: unknown[]) => uploadJsonl(gatewayClient(gateway, workspaceKey), jsonl(lines));

beforeAll(async () => {
  vertex = await startVertexBatchesMock({ pollsToEnd: 2 });
  gateway = await startTestGateway({ GATEWAY_WORKER_POLL_MS: "600000" });
  const workspace = await seedWorkspace(gateway, "Vertex batches");
  workspaceKey = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "vertex-native",
      workspace_id: workspace.id,
      scopes: ["*"],
    })
  ).key;
});

afterAll(async () => {
  await gateway?.close();
  await vertex?.close();
});

describe("vertex-ai native batches", () => {
  it("runs the batch as a Vertex batch prediction job; chat completions back; costs at the batch discount", async () => {
    const client = sdk(vertexHeaders());
    const fileId = await upload([
      chatLine("v-1", "first question"),
      chatLine("v-2", "second question"),
      chatLine("v-3", "please fail"),
    ]);
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const done = await runBatchToEnd(gateway, client, created.id);
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });

    // Vertex ran it: one job in the target's project and region, over the input uploaded to the bucket.
    expect(vertex.jobs.size).toBe(1);
    const [job] = vertex.jobs.values();
    expect(job!.name).toMatch(/^projects\/e2e-project\/locations\/us-east1\/batchPredictionJobs\/\d+$/);
    expect(job!.body.model).toBe("publishers/google/models/gemini-2.0-flash");
    const input = vertex.objects.get(`e2e-batches/gateway-batches/${created.id}/input.jsonl`)!.toString("utf8");
    expect(parseLines(input).map((line) => line.request.contents[0].parts[0].text)).toEqual([
      "first question",
      "second question",
      "please fail",
    ]);

    const output = parseLines(await (await client.files.content(done.output_file_id!)).text());
    expect(output.map((line) => line.custom_id).sort()).toEqual(["v-1", "v-2"]);
    const first = output.find((line) => line.custom_id === "v-1");
    expect(first).toMatchObject({
      error: null,
      response: {
        status_code: 200,
        body: {
          object: "chat.completion",
          model: "gemini-2.0-flash",
          choices: [{ message: { role: "assistant", content: "You said: first question" } }],
        },
      },
    });
    const errors = parseLines(await (await client.files.content(done.error_file_id!)).text());
    expect(errors).toMatchObject([{ custom_id: "v-3", response: null, error: { code: "vertex_request_failed" } }]);

    // Every line is logged; answered lines cost the catalog price of their usage, halved.
    const batchLogs = async () =>
      ((await call(gateway, workspaceKey, "GET", "/v1/logs?limit=100")).body.data as any[]).filter(
        (log) => log.metadata?.batch_id === created.id,
      );
    await expect.poll(async () => (await batchLogs()).length, { timeout: 5000 }).toBe(3);
    const logs = await batchLogs();
    for (const line of output) {
      const log = logs.find((entry) => entry.metadata.custom_id === line.custom_id);
      const full = costOf("vertex-ai", line.response.body.model, line.response.body.usage);
      expect(full.priced).toBe(true);
      expect(log.cost).toBeCloseTo(full.total * 0.5, 12);
    }
  });

  it("without a storage bucket native mode is refused (400) and no job is created", async () => {
    const { "x-gateway-vertex-storage-bucket": _bucket, ...headers } = vertexHeaders();
    const client = sdk({ ...headers, "x-gateway-batch-mode": "native" });
    const fileId = await upload([chatLine("n-1", "hello")]);
    const refused = await client.batches
      .create({ input_file_id: fileId, endpoint: "/v1/chat/completions", completion_window: "24h" })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(vertex.jobs.size).toBe(1);
  });

  it("cancel reaches the Vertex job", async () => {
    const client = sdk(vertexHeaders());
    const fileId = await upload([chatLine("c-1", "slow")]);
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    await gateway.gateway.worker.drain();
    const job = [...vertex.jobs.values()].at(-1)!;
    expect(job.body.displayName).toBe(created.id);
    await client.batches.cancel(created.id);
    expect(job.state).toBe("JOB_STATE_CANCELLING");
    const done = await runBatchToEnd(gateway, client, created.id);
    expect(done.status).toBe("cancelled");
  });
});
