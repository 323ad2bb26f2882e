import type { OutgoingHttpHeaders } from "node:http";

/**
 * One POST with a small text body and a small text answer, over Node's http/https modules and their default
 * keep-alive agents. The modules are imported on the first call: loading them is noticeable, and belongs to
 * the first request that needs them rather than to every cold start. (fetch is not used: it refuses some
 * ports, such as the discard port the contract tests point at, and builds web streams per call.)
 */

export interface PostReply {
  status: number;
  text: string;
}

/** Node caches the modules after the first import, so later calls only pay a resolved promise. */
async function requestFunction(url: URL): Promise<typeof import("node:http")["request"]> {
  return url.protocol === "https:" ? (await import("node:https")).request : (await import("node:http")).request;
}

/** Resolves with any HTTP status; rejects on network faults, and with a `TimeoutError` after `timeoutMs` idle. */
export async function post(
  url: URL,
  headers: OutgoingHttpHeaders,
  body: string,
  timeoutMs: number,
): Promise<PostReply> {
  const request = await requestFunction(url);
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: "POST", headers, timeout: timeoutMs }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("error", reject);
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    outgoing.on("timeout", () => {
      const error = new Error(`no answer within ${timeoutMs} ms`);
      error.name = "TimeoutError";
      outgoing.destroy(error);
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}
