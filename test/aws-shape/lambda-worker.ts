/**
 * One Lambda instance (execution environment) of the AWS shape: a worker thread, so it has module state of its
 * own (caches, pools, lazily loaded chunks) like a separate Lambda sandbox, and only the environment its function
 * was given. It plays the Node.js runtime: installs the `awslambda` global (test/lambda/awslambda-runtime.ts),
 * imports the bundle (the init phase), then runs one invocation at a time as the parent asks:
 * - streaming functions get (event, responseStream, context); every write is posted to the parent as it happens,
 *   the prelude included, as the runtime sends it to the function URL;
 * - other functions (queue and schedule workers) get (event, context) and their result is posted back.
 * An exception that escapes an invocation ends the thread, as it ends the runtime process on Lambda.
 */
import { parentPort, workerData } from "node:worker_threads";
import { pathToFileURL } from "node:url";
import { installAwsLambdaGlobal, isStreamingHandler, ResponseStream } from "../lambda/awslambda-runtime.ts";
import type { InstanceMessage, InvokeMessage } from "./instance-protocol.ts";

const port = parentPort!;
const { file, functionName, memoryMb } = workerData as { file: string; functionName: string; memoryMb: number };
const post = (message: InstanceMessage, transfer?: ArrayBuffer[]) => port.postMessage(message, transfer ?? []);

installAwsLambdaGlobal();
const started = performance.now();
let handler: (...args: any[]) => Promise<unknown>;
try {
  ({ handler } = await import(pathToFileURL(file).href));
  post({ type: "ready", initMs: performance.now() - started });
} catch (error) {
  post({ type: "init-error", message: (error as Error)?.stack ?? String(error) });
  process.exit(1);
}

/** The Lambda context object, as the Node.js runtime builds it. */
function contextOf(message: InvokeMessage) {
  return {
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: message.requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `shape/${functionName}`,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, message.deadline - Date.now()),
  };
}

async function invoke(message: InvokeMessage): Promise<void> {
  const context = contextOf(message);
  try {
    if (message.streaming) {
      if (!isStreamingHandler(handler)) throw new Error("the handler is not wrapped by awslambda.streamifyResponse");
      const stream = new ResponseStream({
        sink: (bytes, contentType) => {
          const copy = new Uint8Array(bytes);
          post({ type: "chunk", id: message.id, bytes: copy, contentType }, [copy.buffer]);
        },
      });
      stream.once("finish", () => post({ type: "end", id: message.id }));
      await handler(message.event, stream, context);
      post({ type: "done", id: message.id });
    } else {
      post({ type: "done", id: message.id, result: await handler(message.event, context) });
    }
  } catch (error) {
    // The runtime reports the error of the invocation; the environment lives on.
    console.error(`${functionName}: invocation ${message.requestId} failed`, error);
    post({ type: "done", id: message.id, error: String((error as Error)?.message ?? error) });
  }
}

port.on("message", (message: InvokeMessage) => {
  void invoke(message);
});
