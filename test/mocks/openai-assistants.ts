import type { ServerResponse } from "node:http";
import { type MockServer, type RecordedRequest, sendJson, startMockServer, writeSse } from "../helpers/mock-server.ts";
import { pathOf, queryOf } from "./openai.ts";

/**
 * A stateful mock of OpenAI's Assistants API v2, shaped after OpenAI's API reference (platform.openai.com/docs/
 * api-reference: assistants, threads, messages, runs, run-steps, vector-stores, vector-stores-files,
 * vector-stores-file-batches, and assistants-streaming/events for the streamed run events).
 *   - OpenAI flavour: paths under /v1, `Authorization: Bearer <apiKey>`, `OpenAI-Beta: assistants=v2` required.
 *   - Azure flavour (`azure: true`): paths under /openai, `api-key: <apiKey>` and an `api-version` query required
 *     (Azure OpenAI's Assistants REST reference).
 * Runs: created `queued`; each retrieve moves them on (`in_progress`, then `completed` with `usage`). A run of an
 * assistant with a function tool stops at `requires_action` until its tool outputs are submitted. A streamed run
 * (`stream: true`) sends the run's events up to `thread.run.completed` (or `thread.run.requires_action`), then
 * `done`.
 */
export interface AssistantsMockOptions {
  apiKey: string;
  azure?: boolean;
}

export const RUN_USAGE = { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 };

type Json = Record<string, any>;

export interface AssistantsMock extends MockServer {
  /** Objects the mock holds, by id (assistants, threads, messages, runs, vector stores). */
  objects: Map<string, Json>;
}

export async function startAssistantsMock(options: AssistantsMockOptions): Promise<AssistantsMock> {
  const objects = new Map<string, Json>();
  let counter = 0;
  const newId = (prefix: string) =>
    `${prefix}_${(++counter).toString(36).padStart(6, "0")}${Math.random().toString(36).slice(2, 8)}`;
  const now = () => Math.floor(Date.now() / 1000);
  const prefix = options.azure ? "/openai" : "/v1";

  const error = (res: ServerResponse, status: number, message: string, param: string | null = null) =>
    sendJson(res, status, { error: { message, type: "invalid_request_error", param, code: null } });

  const list = (items: Json[], query: URLSearchParams) => {
    const order = query.get("order") ?? "desc";
    const sorted = [...items].sort(
      (a, b) => (order === "asc" ? 1 : -1) * (a.created_at - b.created_at || (a.id < b.id ? -1 : 1)),
    );
    const after = query.get("after");
    const start = after ? sorted.findIndex((item) => item.id === after) + 1 : 0;
    const limit = Number(query.get("limit") ?? 20);
    const page = sorted.slice(start, start + limit);
    return {
      object: "list",
      data: page,
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
      has_more: start + limit < sorted.length,
    };
  };

  const ofKind = (object: string, where: (item: Json) => boolean = () => true) =>
    [...objects.values()].filter((item) => item.object === object && where(item));

  const newMessage = (
    threadId: string,
    input: Json,
    runId: string | null = null,
    assistantId: string | null = null,
  ) => {
    const content =
      typeof input.content === "string"
        ? [{ type: "text", text: { value: input.content, annotations: [] } }]
        : input.content;
    const message = {
      id: newId("msg"),
      object: "thread.message",
      created_at: now(),
      thread_id: threadId,
      status: "completed",
      incomplete_details: null,
      completed_at: now(),
      incomplete_at: null,
      role: input.role,
      content,
      assistant_id: assistantId,
      run_id: runId,
      attachments: input.attachments ?? [],
      metadata: input.metadata ?? {},
    };
    objects.set(message.id, message);
    return message;
  };

  const newThread = (body: Json) => {
    const thread = {
      id: newId("thread"),
      object: "thread",
      created_at: now(),
      tool_resources: body.tool_resources ?? {},
      metadata: body.metadata ?? {},
    };
    objects.set(thread.id, thread);
    for (const message of body.messages ?? []) newMessage(thread.id, message);
    return thread;
  };

  const newRun = (threadId: string, body: Json) => {
    const assistant = objects.get(body.assistant_id);
    const run = {
      id: newId("run"),
      object: "thread.run",
      created_at: now(),
      assistant_id: body.assistant_id,
      thread_id: threadId,
      status: "queued",
      started_at: null,
      expires_at: now() + 600,
      cancelled_at: null,
      failed_at: null,
      completed_at: null,
      required_action: null,
      last_error: null,
      model: body.model ?? assistant!.model,
      instructions: body.instructions ?? assistant!.instructions ?? "",
      tools: body.tools ?? assistant!.tools ?? [],
      metadata: body.metadata ?? {},
      usage: null,
      incomplete_details: null,
      temperature: 1,
      top_p: 1,
      max_prompt_tokens: null,
      max_completion_tokens: null,
      truncation_strategy: { type: "auto", last_messages: null },
      response_format: "auto",
      tool_choice: "auto",
      parallel_tool_calls: true,
    };
    for (const message of body.additional_messages ?? []) newMessage(threadId, message);
    objects.set(run.id, run);
    return run;
  };

  const needsTool = (run: Json) => run.tools.some((tool: Json) => tool.type === "function") && !run.toolOutputsGiven;

  /** Moves a run one step on, as time would. */
  const advance = (run: Json) => {
    if (run.status === "queued") {
      run.status = "in_progress";
      run.started_at = now();
    } else if (run.status === "in_progress") {
      if (needsTool(run)) {
        const tool = run.tools.find((item: Json) => item.type === "function");
        run.status = "requires_action";
        run.required_action = {
          type: "submit_tool_outputs",
          submit_tool_outputs: {
            tool_calls: [{ id: "call_1", type: "function", function: { name: tool.function.name, arguments: "{}" } }],
          },
        };
      } else complete(run);
    }
  };

  const complete = (run: Json) => {
    newMessage(run.thread_id, { role: "assistant", content: "Done." }, run.id, run.assistant_id);
    run.status = "completed";
    run.completed_at = now();
    run.required_action = null;
    run.usage = { ...RUN_USAGE };
  };

  const publicRun = (run: Json) => {
    const { toolOutputsGiven: _given, ...rest } = run;
    return { ...rest };
  };

  /** The events of a run from where it is to its end (or its tool call), per the assistant stream events reference. */
  const streamRun = async (res: ServerResponse, run: Json, thread?: Json) => {
    const events: Array<{ event: string; data: unknown }> = [];
    if (thread) events.push({ event: "thread.created", data: thread });
    if (run.status === "queued") {
      events.push({ event: "thread.run.created", data: publicRun(run) });
      events.push({ event: "thread.run.queued", data: publicRun(run) });
    }
    advance(run);
    events.push({ event: "thread.run.in_progress", data: publicRun(run) });
    if (needsTool(run)) {
      advance(run);
      events.push({ event: "thread.run.requires_action", data: publicRun(run) });
    } else {
      complete(run);
      const message = ofKind("thread.message", (item) => item.run_id === run.id).at(-1)!;
      events.push({ event: "thread.message.created", data: { ...message, status: "in_progress" } });
      events.push({
        event: "thread.message.delta",
        data: {
          id: message.id,
          object: "thread.message.delta",
          delta: { content: [{ index: 0, type: "text", text: { value: "Done." } }] },
        },
      });
      events.push({ event: "thread.message.completed", data: message });
      events.push({ event: "thread.run.completed", data: publicRun(run) });
    }
    events.push({ event: "done", data: "[DONE]" });
    await writeSse(res, events, 5);
  };

  const server = await startMockServer(async (req: RecordedRequest, res) => {
    const bearer = req.headers.authorization;
    const authorised = options.azure
      ? req.headers["api-key"] === options.apiKey
      : bearer === `Bearer ${options.apiKey}`;
    if (!authorised) return error(res, 401, "Incorrect API key provided.");
    const query = queryOf(req.path);
    if (options.azure && !query.get("api-version"))
      return error(res, 400, "Missing required query parameter: api-version");
    if (!options.azure && req.headers["openai-beta"] !== "assistants=v2")
      return error(res, 400, "You must provide the 'OpenAI-Beta' header to access the Assistants API.");
    const path = pathOf(req.path);
    if (!path.startsWith(`${prefix}/`)) return error(res, 404, `Invalid URL (${req.method} ${path})`);
    const parts = path.slice(prefix.length + 1).split("/");
    const body: Json = req.body.length > 0 ? req.json() : {};
    const route = `${req.method} ${parts.map((part, i) => (i % 2 === 1 && part !== "runs" ? ":id" : part)).join("/")}`;
    const found = (id: string | undefined, object: string) => {
      const item = id ? objects.get(id) : undefined;
      return item && item.object === object ? item : undefined;
    };
    const missing = (what: string, id: string | undefined) => error(res, 404, `No ${what} found with id '${id}'.`);
    const [first, second, third] = [parts[1], parts[3], parts[4]];

    switch (route) {
      case "POST assistants": {
        const assistant = {
          id: newId("asst"),
          object: "assistant",
          created_at: now(),
          name: body.name ?? null,
          description: body.description ?? null,
          model: body.model,
          instructions: body.instructions ?? null,
          tools: body.tools ?? [],
          tool_resources: body.tool_resources ?? {},
          metadata: body.metadata ?? {},
          top_p: 1,
          temperature: 1,
          response_format: "auto",
        };
        objects.set(assistant.id, assistant);
        return sendJson(res, 200, assistant);
      }
      case "GET assistants":
        return sendJson(res, 200, list(ofKind("assistant"), query));
      case "GET assistants/:id":
      case "POST assistants/:id":
      case "DELETE assistants/:id": {
        const assistant = found(first, "assistant");
        if (!assistant) return missing("assistant", first);
        if (req.method === "POST") Object.assign(assistant, body);
        if (req.method === "DELETE") {
          objects.delete(assistant.id);
          return sendJson(res, 200, { id: assistant.id, object: "assistant.deleted", deleted: true });
        }
        return sendJson(res, 200, assistant);
      }
      case "POST threads":
        return sendJson(res, 200, newThread(body));
      case "POST threads/runs": {
        if (!found(body.assistant_id, "assistant")) return missing("assistant", body.assistant_id);
        const thread = newThread(body.thread ?? {});
        const run = newRun(thread.id, body);
        if (body.stream) return streamRun(res, run, thread);
        return sendJson(res, 200, publicRun(run));
      }
      case "GET threads/:id":
      case "POST threads/:id":
      case "DELETE threads/:id": {
        const thread = found(first, "thread");
        if (!thread) return missing("thread", first);
        if (req.method === "POST") Object.assign(thread, body);
        if (req.method === "DELETE") {
          objects.delete(thread.id);
          return sendJson(res, 200, { id: thread.id, object: "thread.deleted", deleted: true });
        }
        return sendJson(res, 200, thread);
      }
      case "POST threads/:id/messages":
      case "GET threads/:id/messages": {
        if (!found(first, "thread")) return missing("thread", first);
        if (req.method === "POST") return sendJson(res, 200, newMessage(first!, body));
        return sendJson(
          res,
          200,
          list(
            ofKind("thread.message", (item) => item.thread_id === first),
            query,
          ),
        );
      }
      case "GET threads/:id/messages/:id": {
        const message = found(second, "thread.message");
        if (!message || message.thread_id !== first) return missing("message", second);
        return sendJson(res, 200, message);
      }
      case "POST threads/:id/runs":
      case "GET threads/:id/runs": {
        if (!found(first, "thread")) return missing("thread", first);
        if (req.method === "GET")
          return sendJson(
            res,
            200,
            list(ofKind("thread.run", (item) => item.thread_id === first).map(publicRun), query),
          );
        if (!found(body.assistant_id, "assistant")) return missing("assistant", body.assistant_id);
        const run = newRun(first!, body);
        if (body.stream) return streamRun(res, run);
        return sendJson(res, 200, publicRun(run));
      }
      case "GET threads/:id/runs/:id":
      case "POST threads/:id/runs/:id/cancel":
      case "POST threads/:id/runs/:id/submit_tool_outputs": {
        const run = found(second, "thread.run");
        if (!run || run.thread_id !== first) return missing("run", second);
        if (third === "cancel") {
          run.status = "cancelled";
          run.cancelled_at = now();
          run.usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
        } else if (third === "submit_tool_outputs") {
          if (run.status !== "requires_action")
            return error(res, 400, `Runs in status "${run.status}" do not accept tool outputs.`);
          run.toolOutputsGiven = true;
          run.required_action = null;
          run.status = "queued";
          if (body.stream) return streamRun(res, run);
        } else {
          advance(run);
        }
        return sendJson(res, 200, publicRun(run));
      }
      case "GET threads/:id/runs/:id/steps": {
        const run = found(second, "thread.run");
        if (!run || run.thread_id !== first) return missing("run", second);
        return sendJson(res, 200, list([], query));
      }
      case "POST vector_stores": {
        const files = (body.file_ids ?? []).length;
        const store = {
          id: newId("vs"),
          object: "vector_store",
          created_at: now(),
          name: body.name ?? "",
          usage_bytes: 0,
          file_counts: { in_progress: 0, completed: files, failed: 0, cancelled: 0, total: files },
          status: "completed",
          expires_after: null,
          expires_at: null,
          last_active_at: now(),
          metadata: body.metadata ?? {},
        };
        objects.set(store.id, store);
        return sendJson(res, 200, store);
      }
      case "GET vector_stores":
        return sendJson(res, 200, list(ofKind("vector_store"), query));
      case "GET vector_stores/:id":
      case "DELETE vector_stores/:id": {
        const store = found(first, "vector_store");
        if (!store) return missing("vector store", first);
        if (req.method === "DELETE") {
          objects.delete(store.id);
          return sendJson(res, 200, { id: store.id, object: "vector_store.deleted", deleted: true });
        }
        return sendJson(res, 200, store);
      }
      case "POST vector_stores/:id/search": {
        if (!found(first, "vector_store")) return missing("vector store", first);
        return sendJson(res, 200, {
          object: "vector_store.search_results.page",
          search_query: typeof body.query === "string" ? [body.query] : body.query,
          data: [
            {
              file_id: "file-1",
              filename: "notes.txt",
              score: 0.9,
              attributes: {},
              content: [{ type: "text", text: "A note." }],
            },
          ],
          has_more: false,
          next_page: null,
        });
      }
      default:
        return error(res, 404, `Invalid URL (${req.method} ${path})`);
    }
  });
  return Object.assign(server, { objects });
}
