import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayClient, jsonl, parseLines, runBatchToEnd, uploadJsonl } from "../helpers/batches.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type BedrockBatchesMock, startBedrockBatchesMock } from "../mocks/bedrock-batches.ts";

/**
 * Bedrock batch inference end to end with the openai SDK: files.create -> batches.create with a Bedrock target that
 * names a bucket and a service role -> the gateway uploads the records to S3 and creates a model invocation job ->
 * the sweep polls it -> the output file holds chat completions translated from the job's Claude messages.
 */

const MODEL = "anthropic.claude-3-haiku-20240307-v1:0";
let gateway: TestGateway;
let bedrock: BedrockBatchesMock;
let workspaceKey: string;

const chatLine = (customId: string, content: string) => ({
  custom_id: customId,
  method: "POST",
  url: "/v1/chat/completions",
  body: { model: MODEL, messages: [{ role: "user", content }] },
});

beforeAll(async () => {
  bedrock = await startBedrockBatchesMock({ pollsToEnd: 2 });
  gateway = await startTestGateway({ GATEWAY_WORKER_POLL_MS: "600000" });
  const workspace = await seedWorkspace(gateway, "Bedrock batches");
  workspaceKey = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "bedrock-native",
      workspace_id: workspace.id,
      scopes: ["*"],
    })
  ).key;
});

afterAll(async () => {
  await gateway?.close();
  await bedrock?.close();
});

describe("bedrock native batches", () => {
  it("runs a batch as a Bedrock model invocation job and answers chat completions", async () => {
    const client = gatewayClient(gateway, workspaceKey, {
      "x-gateway-provider": "bedrock",
      "x-gateway-custom-host": bedrock.url,
      "x-gateway-aws-access-key-id": "AKIDEXAMPLE",
      "x-gateway-aws-secret-access-key": "bedrock-e2e-secret",
      "x-gateway-aws-region": "us-east-1",
      "x-gateway-aws-s3-bucket": "gateway-e2e-batches",
      "x-gateway-aws-role-arn": "arn:aws:iam::123456789012:role/BedrockBatch",
    });
    const fileId = await uploadJsonl(
      client,
      jsonl([chatLine("q-1", "first"), chatLine("q-2", "second"), chatLine("q-3", "fail")]),
    );
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    expect(created.status).toBe("validating");

    const done = await runBatchToEnd(gateway, client, created.id);
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    // Bedrock ran it: one job, over the records the gateway put in the bucket.
    expect(bedrock.jobs.size).toBe(1);
    const [job] = bedrock.jobs.values();
    expect(job!.body.modelId).toBe(MODEL);
    expect(bedrock.objects.has(`gateway-e2e-batches/gateway-batches/${created.id}/input.jsonl`)).toBe(true);

    const output = parseLines(await (await client.files.content(done.output_file_id!)).text());
    expect(output.map((line) => line.custom_id)).toEqual(["q-1", "q-2"]);
    expect(output[0].response).toMatchObject({
      status_code: 200,
      body: { object: "chat.completion", choices: [{ message: { content: "You said: first" } }] },
    });
    const errors = parseLines(await (await client.files.content(done.error_file_id!)).text());
    expect(errors).toEqual([
      expect.objectContaining({ custom_id: "q-3", response: expect.objectContaining({ status_code: 400 }) }),
    ]);

    // The batch object and the logs never show the AWS secret.
    const raw = await call(gateway, workspaceKey, "GET", `/v1/batches/${created.id}`);
    expect(JSON.stringify(raw.body)).not.toContain("bedrock-e2e-secret");
  });
});
