import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { Readable } from "node:stream";
import busboy from "busboy";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../helpers/mock-server.ts";

/**
 * A small OpenAI Files API (written from OpenAI's API reference) for mock upstreams: `POST /v1/files` (multipart:
 * `purpose` and `file`), `GET /v1/files`, `GET /v1/files/{id}`, `GET /v1/files/{id}/content`, `DELETE
 * /v1/files/{id}`; also under Azure OpenAI's `/openai/files?api-version=...` (and `/openai/v1/files`), which take
 * the key in `api-key`. Files are kept in memory; every request needs the mock's key.
 */

export interface MockProviderFile {
  id: string;
  object: "file";
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: "processed";
  status_details: null;
  /** Not part of the File object: what the mock received, for assertions. */
  content: Buffer;
  contentType: string;
  sha256: string;
}

export interface OpenAIFilesMock {
  server: MockServer;
  url: string;
  files: Map<string, MockProviderFile>;
  /** The next upload answers this status and error instead (once). */
  failNextUpload(
    status: number,
    error: { message: string; type?: string; code?: string | null; param?: string | null },
  ): void;
  close(): Promise<void>;
}

const PURPOSES = new Set(["assistants", "batch", "fine-tune", "vision", "user_data", "evals"]);

export async function startOpenAIFilesMock(options: { apiKey: string }): Promise<OpenAIFilesMock> {
  const files = new Map<string, MockProviderFile>();
  let serial = 0;
  let failure: { status: number; error: Record<string, unknown> } | undefined;

  const server = await startMockServer(async (request, res) => {
    const url = new URL(request.path, "http://mock");
    const match = /^\/(?:v1|openai|openai\/v1)\/files(?:\/([^/]+))?(\/content)?\/?$/.exec(url.pathname);
    if (!match) return error(res, 404, `Invalid URL (${request.method} ${url.pathname})`, "invalid_request_error");
    const azure = url.pathname.startsWith("/openai/");
    const key = azure ? request.headers["api-key"] : request.headers.authorization?.replace(/^Bearer /, "");
    if (key !== options.apiKey)
      return error(res, 401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key");
    if (azure && !url.pathname.startsWith("/openai/v1/") && !url.searchParams.get("api-version")) {
      return error(res, 404, "Resource not found", "invalid_request_error");
    }
    const [, id, content] = match;
    if (!id && request.method === "POST") {
      if (failure) {
        const { status, error: body } = failure;
        failure = undefined;
        return sendJson(res, status, { error: { type: "invalid_request_error", code: null, param: null, ...body } });
      }
      const upload = await readUpload(request);
      if (!upload.purpose || !PURPOSES.has(upload.purpose)) {
        return error(res, 400, "Invalid value for 'purpose'.", "invalid_request_error", null, "purpose");
      }
      if (!upload.file)
        return error(res, 400, "Missing required parameter: 'file'.", "invalid_request_error", null, "file");
      serial++;
      const file: MockProviderFile = {
        id: `file-mock${String(serial).padStart(6, "0")}`,
        object: "file",
        bytes: upload.file.content.length,
        created_at: Math.floor(Date.now() / 1000),
        filename: upload.file.filename,
        purpose: upload.purpose,
        status: "processed",
        status_details: null,
        content: upload.file.content,
        contentType: upload.file.contentType,
        sha256: createHash("sha256").update(upload.file.content).digest("hex"),
      };
      files.set(file.id, file);
      return sendJson(res, 200, publicFile(file));
    }
    if (!id && request.method === "GET") {
      return sendJson(res, 200, { object: "list", data: [...files.values()].map(publicFile), has_more: false });
    }
    const file = id ? files.get(id) : undefined;
    if (!file) return error(res, 404, `No such File object: ${id}`, "invalid_request_error", null, "id");
    if (content && request.method === "GET") {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(file.content);
      return;
    }
    if (!content && request.method === "GET") return sendJson(res, 200, publicFile(file));
    if (!content && request.method === "DELETE") {
      files.delete(file.id);
      return sendJson(res, 200, { id: file.id, object: "file", deleted: true });
    }
    return error(res, 405, "Method not allowed", "invalid_request_error");
  });

  return {
    server,
    url: server.url,
    files,
    failNextUpload(status, body) {
      failure = { status, error: body };
    },
    close: () => server.close(),
  };
}

function publicFile(file: MockProviderFile) {
  const { content: _content, contentType: _type, sha256: _sha, ...rest } = file;
  return rest;
}

function error(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  code: string | null = null,
  param: string | null = null,
): void {
  sendJson(res, status, { error: { message, type, param, code } });
}

async function readUpload(request: RecordedRequest): Promise<{
  purpose?: string;
  file?: { filename: string; contentType: string; content: Buffer };
}> {
  const out: { purpose?: string; file?: { filename: string; contentType: string; content: Buffer } } = {};
  const type = request.headers["content-type"] ?? "";
  if (!type.startsWith("multipart/form-data")) return out;
  await new Promise<void>((resolve, reject) => {
    const parser = busboy({ headers: request.headers });
    parser.on("field", (name, value) => {
      if (name === "purpose") out.purpose = value;
    });
    parser.on("file", (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        if (name === "file")
          out.file = { filename: info.filename ?? "", contentType: info.mimeType, content: Buffer.concat(chunks) };
      });
    });
    parser.on("close", resolve);
    parser.on("error", reject);
    Readable.from([request.body]).pipe(parser);
  });
  return out;
}
