import { parentPort, workerData } from "node:worker_threads";
import type { RecordWritesMessage } from "./record-write-protocol.ts";
import { serveRecordWrites } from "./record-write-service.ts";
import { type CheckpointLoopOptions, startCheckpointLoop } from "./wal-checkpoint-loop.ts";

/**
 * The local platform's storage thread (storage-thread.ts starts it): WAL checkpoints of gateway.db, and the
 * writes of the request-log database. One thread for both keeps the memory of a second V8 isolate away.
 */
const options = workerData as { checkpoint: CheckpointLoopOptions; recordsFile?: string };
const port = parentPort!;

const checkpoints = startCheckpointLoop(options.checkpoint, (walPages) =>
  port.postMessage({ kind: "checkpoint", walPages }),
);
const recordWrites = options.recordsFile
  ? serveRecordWrites(options.recordsFile, (results) => port.postMessage({ kind: "records", results }))
  : undefined;

port.on("message", async (message: RecordWritesMessage | "close") => {
  if (message === "close") {
    checkpoints.close();
    await recordWrites?.close();
    port.postMessage("closed");
    return;
  }
  if (message.kind === "records" && recordWrites) recordWrites.handle(message.ops);
});
