/** Messages between a Lambda instance's worker thread (lambda-worker.ts) and the shape (instance.ts). */

/** Parent -> instance: run one invocation. */
export interface InvokeMessage {
  id: number;
  requestId: string;
  /** Epoch ms at which the function times out (context.getRemainingTimeInMillis). */
  deadline: number;
  streaming: boolean;
  event: unknown;
}

/** Instance -> parent. */
export type InstanceMessage =
  | { type: "ready"; initMs: number }
  | { type: "init-error"; message: string }
  /** A write to the response stream, the prelude's included; contentType is the stream's at that time. */
  | { type: "chunk"; id: number; bytes: Uint8Array; contentType: string | undefined }
  /** The response stream ended: the client has the whole answer. */
  | { type: "end"; id: number }
  /** The handler settled: the invocation is over (background work included). */
  | { type: "done"; id: number; result?: unknown; error?: string };
