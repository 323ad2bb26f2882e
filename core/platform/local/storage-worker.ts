import { getPriority, setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import type { RecordWritesMessage } from "./record-write-protocol.ts";
import { serveRecordWrites } from "./record-write-service.ts";
import { type CheckpointLoopOptions, startCheckpointLoop } from "./wal-checkpoint-loop.ts";

/**
 * The local platform's storage thread (storage-thread.ts starts it): WAL checkpoints of gateway.db, and the
 * writes of the request-log database. One thread for both keeps the memory of a second V8 isolate away.
 */
// A lower priority for this thread alone (on Linux a thread's nice value is its own): a woken thread of equal
// priority preempts the event loop that woke it, which then waits out the thread's inserts. +10 keeps the
// event loop's hand-over cheap while the thread still keeps up on a saturated machine (+19 fell behind). Relative to the
// process's own nice value (lowering is always allowed). Elsewhere the call would lower the whole process, so
// it is Linux only.
if (process.platform === "linux") {
  try {
    setPriority(Math.min(19, getPriority() + 10));
  } catch {
    // Not permitted (some containers): the thread keeps the process's priority.
  }
}

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
