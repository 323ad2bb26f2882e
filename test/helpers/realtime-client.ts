import { WebSocket } from "ws";

/** A `ws` client of a realtime session that keeps every message, for tests. */
export interface RealtimeTestClient {
  ws: WebSocket;
  /** Everything received, in order: parsed events, or Buffers for binary frames. */
  received: Array<Record<string, any> | Buffer>;
  /** Resolves with the next (or an already received, unconsumed) event of this type. */
  next(type: string): Promise<Record<string, any>>;
  nextBinary(): Promise<Buffer>;
  send(event: Record<string, unknown>): void;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens a session; rejects with `{status, body}` when the upgrade is refused. */
export function openRealtime(url: string, headers: Record<string, string>): Promise<RealtimeTestClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const received: RealtimeTestClient["received"] = [];
    const waiters: Array<{ test: (item: Record<string, any> | Buffer) => boolean; resolve: (item: any) => void }> = [];
    let consumed = 0;
    const take = (test: (item: Record<string, any> | Buffer) => boolean) =>
      new Promise<any>((done) => {
        for (let i = consumed; i < received.length; i++) {
          if (test(received[i]!)) {
            consumed = i + 1;
            return done(received[i]);
          }
        }
        waiters.push({ test, resolve: done });
      });
    ws.on("message", (data, isBinary) => {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
      const item = isBinary ? bytes : JSON.parse(bytes.toString("utf8"));
      received.push(item);
      const waiter = waiters.find((candidate) => candidate.test(item));
      if (waiter) {
        waiters.splice(waiters.indexOf(waiter), 1);
        consumed = received.length;
        waiter.resolve(item);
      }
    });
    const closed = new Promise<{ code: number; reason: string }>((done) =>
      ws.on("close", (code, reason) => done({ code, reason: reason.toString() })),
    );
    ws.on("unexpected-response", (_request, response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let body: any = text;
        try {
          body = JSON.parse(text);
        } catch {}
        reject({ status: response.statusCode, headers: response.headers, body });
      });
    });
    ws.on("error", (error) => reject(error));
    ws.on("open", () =>
      resolve({
        ws,
        received,
        next: (type) => take((item) => !Buffer.isBuffer(item) && item.type === type),
        nextBinary: () => take((item) => Buffer.isBuffer(item)),
        send: (event) => ws.send(JSON.stringify(event)),
        closed,
      }),
    );
  });
}
