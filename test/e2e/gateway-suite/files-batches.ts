import { toFile } from "openai";
import { describe, expect, it } from "vitest";
import { startOpenAIBatchesMock } from "../../mocks/openai-batches.ts";
import { fineTuningRoute, fineTuningState } from "../../mocks/openai-fine-tuning.ts";
import { startOpenAIMock } from "../../mocks/openai.ts";
import { echoChat } from "../../helpers/echo-upstream.ts";
import type { SuiteContext } from "./context.ts";

/** The end-to-end suite (index.ts): files, batches and fine-tuning. */
export function describeFilesBatches(suite: SuiteContext): void {
  const { clientFor, messages, mocks } = suite;
  describe("files, batches and fine-tuning (engine chunks loaded on first use)", () => {
    it("files, a provider-native batch polled by the scheduled task, and a fine-tuning job", async () => {
      const jobs = fineTuningState(1);
      const provider = await startOpenAIBatchesMock({
        apiKey: "provider-key",
        pollsToComplete: 1,
        extraRoutes: [fineTuningRoute(jobs)],
      });
      mocks.push(provider);
      const client = clientFor({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${provider.url}/v1` });
      const line = (id: string) =>
        JSON.stringify({
          custom_id: id,
          method: "POST",
          url: "/v1/chat/completions",
          body: { model: "gpt-4o-mini", messages },
        });
      const input = await client.files.create({
        file: await toFile(Buffer.from(`${line("a")}\n${line("b")}\n`), "input.jsonl"),
        purpose: "batch",
      });
      expect(await (await client.files.content(input.id)).text()).toContain('"custom_id":"a"');
      // A large file in parts (the Uploads API): joined in part_ids order.
      const upload = await client.uploads.create({
        filename: "parts.jsonl",
        purpose: "batch",
        bytes: 10,
        mime_type: "application/jsonl",
      });
      const second = await client.uploads.parts.create(upload.id, { data: await toFile(Buffer.from("world"), "b") });
      const first = await client.uploads.parts.create(upload.id, { data: await toFile(Buffer.from("hello"), "a") });
      const completed = await client.uploads.complete(upload.id, { part_ids: [first.id, second.id] });
      expect(completed.status).toBe("completed");
      expect(await (await client.files.content(completed.file!.id)).text()).toBe("helloworld");
      const batch = await client.batches.create({
        input_file_id: input.id,
        endpoint: "/v1/chat/completions",
        completion_window: "24h",
      });
      // The queue worker submits it to the provider; the scheduled task (every 10 s) polls it to the end.
      await expect
        .poll(async () => (await client.batches.retrieve(batch.id)).status, { timeout: 40_000, interval: 500 })
        .toBe("completed");
      const done = await client.batches.retrieve(batch.id);
      expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
      const output = (await (await client.files.content(done.output_file_id!)).text()).trim().split("\n");
      expect(output.map((entry) => JSON.parse(entry).custom_id).sort()).toEqual(["a", "b"]);

      const training = await client.files.create({
        file: await toFile(Buffer.from('{"messages": []}\n'), "train.jsonl"),
        purpose: "fine-tune",
      });
      const job = await client.fineTuning.jobs.create({ model: "gpt-4o-mini-2024-07-18", training_file: training.id });
      expect(job).toMatchObject({ object: "fine_tuning.job", training_file: training.id });
      await expect
        .poll(async () => (await client.fineTuning.jobs.retrieve(job.id)).status, { timeout: 20_000, interval: 500 })
        .toBe("succeeded");
      expect((await client.fineTuning.jobs.listEvents(job.id)).data.length).toBeGreaterThan(0);
    }, 90_000);

    it("a batch the gateway runs itself: each line once through the queue's workers, then the output file", async () => {
      const upstream = await startOpenAIMock({ guard: echoChat });
      mocks.push(upstream);
      const client = clientFor({
        "x-gateway-provider": "openai",
        "x-gateway-custom-host": `${upstream.url}/v1`,
        "x-gateway-batch-mode": "gateway",
      });
      const ids = Array.from({ length: 12 }, (_, index) => `line-${index}`);
      const lines = ids.map((id) =>
        JSON.stringify({
          custom_id: id,
          method: "POST",
          url: "/v1/chat/completions",
          body: { model: "gpt-4o-mini", messages: [{ role: "user", content: `run ${id}` }] },
        }),
      );
      // Kept in the gateway (no routing headers: a file sent with a provider is copied to that provider too).
      const input = await clientFor({}).files.create({
        file: await toFile(Buffer.from(`${lines.join("\n")}\n`), "lines.jsonl"),
        purpose: "batch",
      });
      const batch = await client.batches.create({
        input_file_id: input.id,
        endpoint: "/v1/chat/completions",
        completion_window: "24h",
      });
      await expect
        .poll(async () => (await client.batches.retrieve(batch.id)).status, { timeout: 60_000, interval: 500 })
        .toBe("completed");
      const done = await client.batches.retrieve(batch.id);
      expect(done.request_counts).toEqual({ total: 12, completed: 12, failed: 0 });
      const output = (await (await clientFor({}).files.content(done.output_file_id!)).text()).trim().split("\n");
      const answers = new Map(output.map((entry) => [JSON.parse(entry).custom_id, JSON.parse(entry)]));
      expect([...answers.keys()].sort()).toEqual([...ids].sort());
      for (const id of ids) expect(answers.get(id).response.body.choices[0].message.content).toBe(`echo: run ${id}`);
      // Every line reached the provider exactly once.
      const sent = upstream.requests.map((request) => request.json().messages?.[0]?.content);
      for (const id of ids) expect(sent.filter((content) => content === `run ${id}`)).toHaveLength(1);
    }, 90_000);
  });
}
