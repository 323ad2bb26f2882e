import * as z from "zod/mini";
import { int } from "../../http/zod-mini.ts";
import { modelName } from "../../inference/gateway/schemas/common.ts";

/**
 * Light checks of OpenAI's Assistants API v2 request bodies (platform.openai.com/docs/api-reference/assistants,
 * /threads, /messages, /runs, /vector-stores): the fields the gateway reads (ids it checks the owner of, `model`,
 * `stream`) and the ones a client most often gets wrong. Every schema is loose: the body is forwarded as it came,
 * and the provider judges the rest.
 */

/** An object id (`asst_...`, `thread_...`, `vs_...`, `file-...`). */
export const objectId = z.string().check(z.minLength(1), z.maxLength(256));

const stream = z.optional(z.nullable(z.boolean()));
const tools = z.optional(z.nullable(z.array(z.looseObject({ type: z.string() }))));

/** `tool_resources` of an assistant, a thread or a run: the vector stores it names are checked for their owner. */
export const toolResources = z.optional(
  z.nullable(
    z.looseObject({
      code_interpreter: z.optional(z.nullable(z.looseObject({ file_ids: z.optional(z.array(objectId)) }))),
      file_search: z.optional(
        z.nullable(
          z.looseObject({
            vector_store_ids: z.optional(z.array(objectId)),
            vector_stores: z.optional(z.array(z.looseObject({ file_ids: z.optional(z.array(objectId)) }))),
          }),
        ),
      ),
    }),
  ),
);

const messageInput = z.looseObject({
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
});

export const createAssistantBody = z.looseObject({
  model: modelName,
  name: z.optional(z.nullable(z.string())),
  instructions: z.optional(z.nullable(z.string())),
  tools,
  tool_resources: toolResources,
});

export const modifyAssistantBody = z.looseObject({
  model: z.optional(modelName),
  tools,
  tool_resources: toolResources,
});

export const createThreadBody = z.looseObject({
  messages: z.optional(z.array(messageInput)),
  tool_resources: toolResources,
});

export const modifyThreadBody = z.looseObject({ tool_resources: toolResources });

export const createMessageBody = messageInput;

/** Modifying a message, a run or a vector store file changes only its metadata (or attributes). */
export const metadataBody = z.looseObject({});

export const createRunBody = z.looseObject({
  assistant_id: objectId,
  model: z.optional(z.nullable(modelName)),
  additional_messages: z.optional(z.nullable(z.array(messageInput))),
  tools,
  stream,
});

export const createThreadAndRunBody = z.looseObject({
  assistant_id: objectId,
  model: z.optional(z.nullable(modelName)),
  thread: z.optional(createThreadBody),
  tool_resources: toolResources,
  tools,
  stream,
});

export const submitToolOutputsBody = z.looseObject({
  tool_outputs: z.array(z.looseObject({ tool_call_id: z.optional(z.string()), output: z.optional(z.string()) })),
  stream,
});

export const createVectorStoreBody = z.looseObject({
  name: z.optional(z.nullable(z.string())),
  file_ids: z.optional(z.array(objectId)),
});

export const modifyVectorStoreBody = z.looseObject({ name: z.optional(z.nullable(z.string())) });

export const searchVectorStoreBody = z.looseObject({
  query: z.union([z.string(), z.array(z.string())]),
  max_num_results: z.optional(int(z.minimum(1), z.maximum(50))),
});

export const createVectorStoreFileBody = z.looseObject({ file_id: objectId });

export const createFileBatchBody = z.looseObject({
  file_ids: z.optional(z.array(objectId)),
  files: z.optional(z.array(z.looseObject({ file_id: objectId }))),
});
