import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { checkReceiveMax, type Queue, type QueueMessage } from "../../store/ports.ts";
import { aws } from "./errors.ts";

/** SQS limits: 10 messages per batch send, 20 s of long polling. */
const SQS_BATCH = 10;
const SQS_MAX_WAIT = 20;

/**
 * Queues on SQS. Dead-lettering is SQS's own: each queue has a RedrivePolicy with maxReceiveCount =
 * MAX_RECEIVES pointing at its DLQ (set up by infra/storage.ts and by the test emulators), which moves a
 * message on the receive that would exceed it. `queueUrls` maps logical names, DLQs included, to URLs.
 */
export class SqsQueue implements Queue {
  readonly #client: SQSClient;
  readonly #urls: Record<string, string>;

  constructor(client: SQSClient, queueUrls: Record<string, string>) {
    this.#client = client;
    this.#urls = queueUrls;
  }

  async send(queue: string, body: unknown, options: { delaySeconds?: number } = {}): Promise<string> {
    const out = await aws("queue.send", () =>
      this.#client.send(
        new SendMessageCommand({
          QueueUrl: this.#url(queue),
          MessageBody: serialize(body),
          DelaySeconds: options.delaySeconds,
        }),
      ),
    );
    return out.MessageId!;
  }

  async sendBatch(queue: string, bodies: unknown[]): Promise<string[]> {
    const url = this.#url(queue);
    const messages = bodies.map(serialize);
    const ids: string[] = [];
    for (let start = 0; start < messages.length; start += SQS_BATCH) {
      const chunk = messages.slice(start, start + SQS_BATCH);
      const out = await aws("queue.sendBatch", () =>
        this.#client.send(
          new SendMessageBatchCommand({
            QueueUrl: url,
            Entries: chunk.map((MessageBody, index) => ({ Id: String(index), MessageBody })),
          }),
        ),
      );
      if (out.Failed?.length) {
        const failure = out.Failed[0];
        throw new Error(`queue.sendBatch: ${out.Failed.length} messages failed (${failure.Code}: ${failure.Message})`);
      }
      // Successful entries may come back in any order; their Id is the index within the chunk.
      const byIndex = new Map((out.Successful ?? []).map((entry) => [Number(entry.Id), entry.MessageId!]));
      ids.push(...chunk.map((_, index) => byIndex.get(index)!));
    }
    return ids;
  }

  async receive(
    queue: string,
    options: { max: number; visibilityTimeoutSeconds: number; waitSeconds?: number },
  ): Promise<QueueMessage[]> {
    checkReceiveMax(options.max);
    const out = await aws("queue.receive", () =>
      this.#client.send(
        new ReceiveMessageCommand({
          QueueUrl: this.#url(queue),
          MaxNumberOfMessages: options.max,
          VisibilityTimeout: options.visibilityTimeoutSeconds,
          WaitTimeSeconds: Math.min(options.waitSeconds ?? 0, SQS_MAX_WAIT),
          MessageSystemAttributeNames: ["ApproximateReceiveCount"],
        }),
      ),
    );
    return (out.Messages ?? []).map((message) => ({
      id: message.MessageId!,
      receipt: message.ReceiptHandle!,
      body: JSON.parse(message.Body ?? "null"),
      attempts: Number(message.Attributes?.ApproximateReceiveCount ?? 1),
    }));
  }

  async ack(queue: string, receipt: string): Promise<void> {
    await aws("queue.ack", () =>
      this.#client.send(new DeleteMessageCommand({ QueueUrl: this.#url(queue), ReceiptHandle: receipt })),
    );
  }

  async release(queue: string, receipt: string, delaySeconds = 0): Promise<void> {
    try {
      await aws("queue.release", () =>
        this.#client.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: this.#url(queue),
            ReceiptHandle: receipt,
            VisibilityTimeout: delaySeconds,
          }),
        ),
      );
    } catch (error) {
      // Already visible again (its timeout ran out): that is what release asked for, as on the local queue.
      if ((error as Error).name !== "MessageNotInflight") throw error;
    }
  }

  #url(queue: string): string {
    const url = this.#urls[queue];
    if (!url) throw new Error(`no SQS queue URL configured for queue "${queue}"`);
    return url;
  }
}

function serialize(body: unknown): string {
  const json = JSON.stringify(body);
  if (json === undefined) throw new TypeError("a queue message body must be JSON-serialisable");
  return json;
}
