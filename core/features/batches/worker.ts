import type { Services, QueueConsumer } from "../../services.ts";
import type { QueueMessage } from "../../store/ports.ts";
import { finaliseBatch } from "./finalise.ts";
import { isBatchMessage } from "./messages.ts";
import { runLineMessage } from "./run-line.ts";
import { runStartMessage } from "./start.ts";

/**
 * The `batches` queue consumer: `start` (validate, then submit natively or fan the lines out), `line` (run one
 * line through the pipeline and settle it), `finalise` (write the output and error files, end the batch). The
 * messages of one receive run side by side (at most 10: the receive's size bounds the concurrency). A message
 * that throws is named in failedIds and delivered again; every handler is idempotent under redelivery.
 */
export const consumeBatches: QueueConsumer = async (messages, services) => {
  const failedIds: string[] = [];
  await Promise.all(
    messages.map(async (message) => {
      try {
        await handle(message, services);
      } catch (error) {
        console.error(`batches: message ${message.id} failed (attempt ${message.attempts})`, error);
        failedIds.push(message.id);
      }
    }),
  );
  return { failedIds };
};

async function handle(message: QueueMessage, services: Services): Promise<void> {
  const body = message.body;
  if (!isBatchMessage(body)) {
    console.error(`batches: message ${message.id} is not a batch message; dropped`);
    return;
  }
  if (body.type === "start") return runStartMessage(body, message.attempts, services);
  if (body.type === "line") return runLineMessage(body, message.attempts, services);
  // Not ready (a counter ahead of the records): the lines still running send finalise again as they settle.
  await finaliseBatch(services, body.owner, body.batchId);
}
