import type { Schema } from "../../http/json.ts";
import {
  createAssistantBody,
  createFileBatchBody,
  createMessageBody,
  createRunBody,
  createThreadAndRunBody,
  createThreadBody,
  createVectorStoreBody,
  createVectorStoreFileBody,
  metadataBody,
  modifyAssistantBody,
  modifyThreadBody,
  modifyVectorStoreBody,
  searchVectorStoreBody,
  submitToolOutputsBody,
} from "./schemas.ts";

/** The objects of the Assistants API whose owner the gateway records: the account is shared by workspaces. */
export type OwnedKind = "assistant" | "thread" | "message" | "run" | "vector_store" | "file_batch";

/** Path parameters (as the route table names them) that name an owned object. */
export const OWNED_PARAMS: Readonly<Record<string, OwnedKind>> = {
  assistant_id: "assistant",
  thread_id: "thread",
  message_id: "message",
  run_id: "run",
  vector_store_id: "vector_store",
  batch_id: "file_batch",
};

/** The `object` field of the answers that create an owned object. */
export const OWNED_OBJECTS: Readonly<Record<string, OwnedKind>> = {
  assistant: "assistant",
  thread: "thread",
  "thread.message": "message",
  "thread.run": "run",
  vector_store: "vector_store",
  "vector_store.file_batch": "file_batch",
};

/** What the gateway does around one Assistants API call besides forwarding it. */
export interface AssistantsOperation {
  /** The JSON body's light check (POST); absent: whatever body came is forwarded unchecked. */
  body?: Schema;
  /** The answer (or a streamed run's events) is an object the caller's workspace now owns. */
  creates?: true;
  /** A `deleted: true` answer ends the object's record. */
  deletes?: true;
  /** A list of objects the whole account shares: filtered to the caller's own (and ids never recorded). */
  filtersList?: true;
}

/**
 * Every operation of OpenAI's Assistants API v2 the `openai` SDK calls (beta.assistants, beta.threads with its
 * messages, runs and steps, vectorStores with its files and file batches), by the handler name the route
 * table (core/routes/table.ts, family `assistants`) gives it.
 */
export const ASSISTANTS_OPERATIONS: Readonly<Record<string, AssistantsOperation>> = {
  createAssistant: { body: createAssistantBody, creates: true },
  listAssistants: { filtersList: true },
  getAssistant: {},
  modifyAssistant: { body: modifyAssistantBody },
  deleteAssistant: { deletes: true },

  createThread: { body: createThreadBody, creates: true },
  createThreadAndRun: { body: createThreadAndRunBody, creates: true },
  getThread: {},
  modifyThread: { body: modifyThreadBody },
  deleteThread: { deletes: true },

  createMessage: { body: createMessageBody, creates: true },
  listMessages: {},
  getMessage: {},
  modifyMessage: { body: metadataBody },
  deleteMessage: { deletes: true },

  createRun: { body: createRunBody, creates: true },
  listRuns: {},
  getRun: {},
  modifyRun: { body: metadataBody },
  cancelRun: {},
  submitToolOutputs: { body: submitToolOutputsBody },
  listRunSteps: {},
  getRunStep: {},

  createVectorStore: { body: createVectorStoreBody, creates: true },
  listVectorStores: { filtersList: true },
  getVectorStore: {},
  modifyVectorStore: { body: modifyVectorStoreBody },
  deleteVectorStore: { deletes: true },
  searchVectorStore: { body: searchVectorStoreBody },
  createVectorStoreFile: { body: createVectorStoreFileBody },
  listVectorStoreFiles: {},
  getVectorStoreFile: {},
  updateVectorStoreFile: { body: metadataBody },
  deleteVectorStoreFile: {},
  vectorStoreFileContent: {},
  createFileBatch: { body: createFileBatchBody, creates: true },
  getFileBatch: {},
  cancelFileBatch: {},
  listFileBatchFiles: {},
};
