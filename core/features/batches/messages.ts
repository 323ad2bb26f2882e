import type { ResourceOwner } from "../../auth/resource-owner.ts";

/** Messages of the `batches` queue (core/features/batches/worker.ts). Each names its batch by owner and id. */
export type BatchMessage = StartMessage | LineMessage | FinaliseMessage;

export interface StartMessage {
  type: "start";
  owner: ResourceOwner;
  batchId: string;
}

/** One input line to run (gateway mode). A large body is in Blobs (`bodyBlob`) instead of the message. */
export interface LineMessage {
  type: "line";
  owner: ResourceOwner;
  batchId: string;
  line: number;
  customId: string;
  body?: Record<string, unknown>;
  bodyBlob?: string;
}

export interface FinaliseMessage {
  type: "finalise";
  owner: ResourceOwner;
  batchId: string;
}

export const BATCHES_QUEUE = "batches";

export function isBatchMessage(value: unknown): value is BatchMessage {
  const message = value as Partial<BatchMessage> | null;
  return (
    typeof message === "object" &&
    message !== null &&
    (message.type === "start" || message.type === "line" || message.type === "finalise") &&
    typeof message.batchId === "string" &&
    typeof message.owner?.organisationId === "string" &&
    typeof message.owner?.workspaceId === "string"
  );
}
