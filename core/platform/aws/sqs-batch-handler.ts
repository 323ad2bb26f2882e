import type { Services } from "../../services.ts";
import type { QueueMessage } from "../../store/ports.ts";
import { QUEUE_CONSUMERS, type QueueConsumer } from "../../routes/queue-consumers.ts";
import { lazy } from "./lazy.ts";

/**
 * Hands an SQS event (a batch from the queue's Lambda event source) to the queue's consumer and reports
 * the messages that failed as partial batch failures: SQS deletes the others and delivers only the failed
 * ones again (dead-lettering them after MAX_RECEIVES receives). The same contract as the local worker loop.
 */

export interface SqsRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: { ApproximateReceiveCount: string };
}

export interface SqsEvent {
  Records: SqsRecord[];
}

export interface SqsBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

export type SqsHandler = (event: SqsEvent) => Promise<SqsBatchResponse>;

export function createSqsBatchHandler(
  queueName: string,
  init: () => Promise<Services>,
  consumers: Partial<Record<string, QueueConsumer>> = QUEUE_CONSUMERS,
): SqsHandler {
  const services = lazy(init);

  return async (event) => {
    const failed = new Set<string>();
    const messages: QueueMessage[] = [];
    for (const record of event.Records) {
      try {
        messages.push(toMessage(record));
      } catch (error) {
        // Never parseable: failing it sends it to the dead-letter queue, where it can be inspected.
        console.error(`queue '${queueName}': message ${record.messageId} has a body that is not JSON`, error);
        failed.add(record.messageId);
      }
    }

    if (messages.length > 0) {
      for (const id of await consume(queueName, consumers[queueName], messages, await services())) failed.add(id);
    }
    return { batchItemFailures: [...failed].map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

/** The ids of the messages that failed; all of them when the consumer throws or is missing. */
async function consume(
  queueName: string,
  consumer: QueueConsumer | undefined,
  messages: QueueMessage[],
  services: Services,
): Promise<string[]> {
  try {
    if (!consumer) throw new Error(`no consumer is registered for queue '${queueName}'`);
    return (await consumer(messages, services)).failedIds;
  } catch (error) {
    console.error(`queue '${queueName}': the consumer failed the whole batch`, error);
    return messages.map((message) => message.id);
  }
}

function toMessage(record: SqsRecord): QueueMessage {
  return {
    id: record.messageId,
    receipt: record.receiptHandle,
    body: JSON.parse(record.body),
    attempts: Number(record.attributes.ApproximateReceiveCount) || 1,
  };
}
