import { describe, expect, it } from "vitest";
import { storedBeforeLastEvent } from "../../../../core/features/responses/stored-before-end.ts";
import { sseResponse, sseSourceOf } from "../../../../core/inference/gateway/stream/sse-source.ts";

/** A stream of these pieces; `ended` resolves once its last piece was handed out (as sse-answer's bookkeeping). */
function source(pieces: Array<string | Uint8Array>) {
  let ended!: () => void;
  const endedPromise = new Promise<void>((resolve) => {
    ended = resolve;
  });
  let at = 0;
  const response = sseResponse({
    async next() {
      if (at === pieces.length) {
        ended();
        return null;
      }
      return pieces[at++]!;
    },
    async cancel() {},
  });
  return { response, ended: endedPromise };
}

const event = (type: string) => `event: ${type}\ndata: {"type":"${type}"}\n\n`;

describe("storedBeforeLastEvent", () => {
  it("sends every event as it comes and the terminal one only once the response is stored", async () => {
    const { response, ended } = source([
      event("response.created"),
      event("response.output_text.delta"),
      event("response.completed"),
    ]);
    let stored = false;
    const storing = ended.then(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      stored = true;
    });
    const held = sseSourceOf(storedBeforeLastEvent(response, storing));
    expect(await held.next()).toBe(event("response.created"));
    expect(await held.next()).toBe(event("response.output_text.delta"));
    // The terminal event waits for the source's end (which starts the bookkeeping) and for the store.
    expect(await held.next()).toBe(event("response.completed"));
    expect(stored).toBe(true);
    expect(await held.next()).toBeNull();
  });

  it("finds the terminal event in bytes too, at a line's start only", async () => {
    const bytes = new TextEncoder().encode(event("response.output_text.delta") + event("response.failed"));
    const quoted = `event: response.output_text.delta\ndata: {"delta":"event: response.completed\\n"}\n\n`;
    const { response, ended } = source([quoted, bytes]);
    let stored = false;
    const held = sseSourceOf(
      storedBeforeLastEvent(
        response,
        ended.then(() => (stored = true)),
      ),
    );
    // A delta that quotes a terminal line is not one: it flows at once.
    expect(await held.next()).toBe(quoted);
    expect(stored).toBe(false);
    expect(new TextDecoder().decode((await held.next()) as Uint8Array)).toContain("response.failed");
    expect(stored).toBe(true);
  });

  it("keeps the answer's status and headers", () => {
    const { response } = source([]);
    const held = storedBeforeLastEvent(response, Promise.resolve());
    expect(held.status).toBe(200);
    expect(held.headers.get("content-type")).toContain("text/event-stream");
  });
});
