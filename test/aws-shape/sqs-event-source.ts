import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * A Lambda event source mapping on an SQS queue, as Lambda runs one: pollers (as many as the mapping's maximum
 * concurrency) long-poll the queue for batches of up to `batchSize` messages, with the queue's own visibility
 * timeout, and invoke the worker function with an SQS event. Then:
 * - the invocation succeeds: its messages are deleted, except those it names in `batchItemFailures` (with
 *   ReportBatchItemFailures; a response that names an id not in the batch fails the whole batch);
 * - it fails (throws, times out, its environment crashes): none is deleted.
 * Messages left on the queue become visible again when their visibility timeout runs out and are delivered again,
 * perhaps to another instance; the queue's redrive policy moves a message to its dead-letter queue past its
 * maximum receives. Every delivery is recorded as it starts, for tests.
 */

export interface Delivery {
  queue: string;
  messageIds: string[];
  /** ApproximateReceiveCount of each message, in order. */
  receiveCounts: number[];
  /** The instance that ran it, when the invocation got one. */
  instance?: string;
  /** The messages the invocation reported failed (all of them when it failed). */
  failed: string[];
  outcome: "running" | "ok" | "failed";
}

export interface EventSourceOptions {
  sqs: SQSClient;
  queueName: string;
  queueUrl: string;
  queueArn: string;
  batchSize: number;
  partialResponses: boolean;
  pollers: number;
  invoke(event: unknown, onInstance: (id: string) => void): Promise<unknown>;
  record(delivery: Delivery): void;
  log(line: string): void;
}

export interface EventSource {
  stop(): Promise<void>;
}

/** Lambda long-polls for up to 20 s; a shorter wait lets the shape stop quickly. */
const WAIT_SECONDS = 2;

export function startSqsEventSource(options: EventSourceOptions): EventSource {
  const controller = new AbortController();
  const pollers = Array.from({ length: options.pollers }, () => poll(options, controller.signal));
  return {
    async stop() {
      controller.abort();
      await Promise.allSettled(pollers);
    },
  };
}

async function poll(options: EventSourceOptions, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    let messages: Message[];
    try {
      const received = await options.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: options.queueUrl,
          MaxNumberOfMessages: options.batchSize,
          WaitTimeSeconds: WAIT_SECONDS,
          MessageSystemAttributeNames: ["All"],
          MessageAttributeNames: ["All"],
        }),
        { abortSignal: signal },
      );
      messages = received.Messages ?? [];
    } catch (error) {
      if (signal.aborted) return;
      options.log(`event source ${options.queueName}: receive failed: ${(error as Error).message}`);
      await sleep(500, undefined, { signal }).catch(() => {});
      continue;
    }
    if (messages.length > 0) await deliver(options, messages);
  }
}

async function deliver(options: EventSourceOptions, messages: Message[]): Promise<void> {
  const delivery: Delivery = {
    queue: options.queueName,
    messageIds: messages.map((message) => message.MessageId!),
    receiveCounts: messages.map((message) => Number(message.Attributes?.ApproximateReceiveCount ?? 1)),
    failed: [],
    outcome: "running",
  };
  // Recorded as it starts: a test may look while a slow delivery is still running.
  options.record(delivery);
  let failed: Set<string>;
  try {
    const result = await options.invoke(sqsEvent(options, messages), (id) => {
      delivery.instance = id;
    });
    failed = failuresOf(result, delivery.messageIds, options.partialResponses);
    delivery.outcome = "ok";
  } catch (error) {
    options.log(`event source ${options.queueName}: invocation failed: ${(error as Error).message}`);
    failed = new Set(delivery.messageIds);
    delivery.outcome = "failed";
  }
  delivery.failed = [...failed];
  const done = messages.filter((message) => !failed.has(message.MessageId!));
  for (let start = 0; start < done.length; start += 10) {
    await options.sqs
      .send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: done.slice(start, start + 10).map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.ReceiptHandle!,
          })),
        }),
      )
      .catch((error) => options.log(`event source ${options.queueName}: delete failed: ${error.message}`));
  }
}

/** The messages to leave on the queue, from the function's answer. */
function failuresOf(result: unknown, ids: string[], partialResponses: boolean): Set<string> {
  if (!partialResponses) return new Set();
  const failures = (result as { batchItemFailures?: unknown } | null | undefined)?.batchItemFailures;
  if (failures === undefined || failures === null) return new Set();
  if (!Array.isArray(failures)) return new Set(ids);
  const named = new Set<string>();
  for (const failure of failures) {
    const id = (failure as { itemIdentifier?: unknown })?.itemIdentifier;
    // An empty, missing or unknown identifier makes Lambda treat the whole batch as failed.
    if (typeof id !== "string" || !ids.includes(id)) return new Set(ids);
    named.add(id);
  }
  return named;
}

/** The event Lambda's SQS poller invokes the function with. */
function sqsEvent(options: EventSourceOptions, messages: Message[]) {
  return {
    Records: messages.map((message) => ({
      messageId: message.MessageId,
      receiptHandle: message.ReceiptHandle,
      body: message.Body ?? "",
      attributes: {
        ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? "1",
        SentTimestamp: message.Attributes?.SentTimestamp ?? String(Date.now()),
        SenderId: message.Attributes?.SenderId ?? "AIDAEXAMPLE",
        ApproximateFirstReceiveTimestamp: message.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      },
      messageAttributes: message.MessageAttributes ?? {},
      md5OfBody: message.MD5OfBody,
      eventSource: "aws:sqs",
      eventSourceARN: options.queueArn,
      awsRegion: "us-east-1",
    })),
  };
}
