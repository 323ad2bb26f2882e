import { describe, expect, it } from "vitest";
import { createSqsBatchHandler, type SqsEvent } from "../../core/platform/aws/sqs-batch-handler.ts";
import type { Services } from "../../core/services.ts";
import type { QueueMessage } from "../../core/store/ports.ts";
import type { QueueConsumer } from "../../core/routes/queue-consumers.ts";
import { storelessServices } from "./fake-app.ts";

/** An SQS event as Lambda's event source mapping delivers it. */
function sqsEvent(...records: { id: string; body: string; receives?: number }[]): SqsEvent {
  return {
    Records: records.map(({ id, body, receives }) => ({
      messageId: id,
      receiptHandle: `receipt-${id}`,
      body,
      attributes: { ApproximateReceiveCount: String(receives ?? 1) },
    })),
  };
}

const services = storelessServices();
const init = async (): Promise<Services> => services;

describe("SQS adapter", () => {
  it("hands the batch to the queue's consumer and reports only its failures", async () => {
    const seen: QueueMessage[] = [];
    const consumer: QueueConsumer = async (messages, given) => {
      expect(given).toBe(services);
      seen.push(...messages);
      return { failedIds: ["m2"] };
    };
    const handler = createSqsBatchHandler("exports", init, { exports: consumer });

    const response = await handler(
      sqsEvent({ id: "m1", body: '{"job":1}' }, { id: "m2", body: '{"job":2}', receives: 3 }, { id: "m3", body: "[]" }),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "m2" }] });
    expect(seen).toEqual([
      { id: "m1", receipt: "receipt-m1", body: { job: 1 }, attempts: 1 },
      { id: "m2", receipt: "receipt-m2", body: { job: 2 }, attempts: 3 },
      { id: "m3", receipt: "receipt-m3", body: [], attempts: 1 },
    ]);
  });

  it("fails a message whose body is not JSON without showing it to the consumer", async () => {
    const seen: string[] = [];
    const consumer: QueueConsumer = async (messages) => {
      seen.push(...messages.map((message) => message.id));
      return { failedIds: [] };
    };
    const handler = createSqsBatchHandler("exports", init, { exports: consumer });

    const response = await handler(sqsEvent({ id: "good", body: "{}" }, { id: "bad", body: "not json" }));

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "bad" }]);
    expect(seen).toEqual(["good"]);
  });

  it("fails the whole batch when the consumer throws", async () => {
    const handler = createSqsBatchHandler("exports", init, {
      exports: async () => {
        throw new Error("the export store is down");
      },
    });
    const response = await handler(sqsEvent({ id: "a", body: "1" }, { id: "b", body: "2" }));
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "a" }, { itemIdentifier: "b" }]);
  });

  it("fails the whole batch when no consumer is registered for the queue", async () => {
    const handler = createSqsBatchHandler("exports", init, {});
    const response = await handler(sqsEvent({ id: "a", body: "1" }));
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "a" }]);
  });

  it("builds the services once per container", async () => {
    let builds = 0;
    const handler = createSqsBatchHandler(
      "exports",
      async () => {
        builds++;
        return services;
      },
      { exports: async () => ({ failedIds: [] }) },
    );
    await handler(sqsEvent({ id: "a", body: "1" }));
    await handler(sqsEvent({ id: "b", body: "2" }));
    expect(builds).toBe(1);
  });
});
