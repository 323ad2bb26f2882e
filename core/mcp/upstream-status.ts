import { UPSTREAM_TOO_LARGE } from "../http/errors.ts";

/** The most of a stream read to find its first event: an error event is a few hundred bytes. */
const PEEK_BYTES = 64 * 1024;

/**
 * The HTTP answer to a lone MCP request. The SDK's transport answers with an event stream before the request's
 * handler has run, so its status is 200 whatever happens upstream. When the first event is the request's own
 * error for an upstream answer too large (proxy-server.ts), the caller gets that JSON-RPC error as JSON with
 * HTTP 502, as a gateway answers an upstream it could not use; any other stream is passed on as it came (the
 * bytes read to decide first).
 */
export async function withUpstreamStatus(response: Response): Promise<Response> {
  if (!response.body || !response.headers.get("content-type")?.startsWith("text/event-stream")) return response;
  const reader = response.body.getReader();
  const seen: Uint8Array[] = [];
  const decoder = new TextDecoder();
  let text = "";
  let ended = false;
  while (!text.includes("\n\n") && text.length <= PEEK_BYTES) {
    const { done, value } = await reader.read();
    if (done) {
      ended = true;
      break;
    }
    seen.push(value);
    text += decoder.decode(value, { stream: true });
  }
  const refusal = text.length <= PEEK_BYTES ? tooLargeRefusal(text.split("\n\n")[0]!) : undefined;
  if (refusal) {
    await reader.cancel().catch(() => {});
    return new Response(refusal, { status: 502, headers: { "content-type": "application/json" } });
  }
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of seen) controller.enqueue(chunk);
      if (ended) controller.close();
    },
    async pull(controller) {
      if (ended) return;
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** The JSON-RPC error response an SSE event holds, when it is one for an upstream answer too large. */
function tooLargeRefusal(event: string): string | undefined {
  if (!event.includes(UPSTREAM_TOO_LARGE)) return undefined;
  const data = event
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trimStart())
    .join("\n");
  try {
    const message = JSON.parse(data) as { id?: unknown; error?: { data?: { code?: unknown } } };
    return message.id !== undefined && message.error?.data?.code === UPSTREAM_TOO_LARGE ? data : undefined;
  } catch {
    return undefined;
  }
}
