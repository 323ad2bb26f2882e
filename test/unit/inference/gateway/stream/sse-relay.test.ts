import { describe, expect, it } from "vitest";
import { SseRelay } from "../../../../../core/inference/gateway/stream/sse-relay.ts";
import { assembleStream } from "../../../../../core/inference/gateway/stream/assembly.ts";
import { StreamTranscript, Transcript } from "../../../../../core/inference/gateway/stream/transcript.ts";
import { passthroughTransformer } from "../../../../../core/providers/openai/compatible.ts";
import { SseDecoder } from "../../../../../core/providers/stream/sse.ts";

/** OpenAI chat chunks as its API streams them with include_usage: `usage: null` and obfuscation on each. */
function openaiChunks(words: string[], options: { spaced?: boolean; model?: string } = {}): string[] {
  const head = { id: "chatcmpl-AbC", object: "chat.completion.chunk", created: 1750000000 };
  const model = options.model ?? "gpt-4o-mini-2024-07-18";
  const chunks: object[] = [
    {
      ...head,
      model,
      choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }],
      usage: null,
      obfuscation: "x1",
    },
    ...words.map((word, i) => ({
      ...head,
      model,
      choices: [
        {
          index: 0,
          delta: { content: word },
          logprobs: null,
          finish_reason: i === words.length - 1 ? "stop" : null,
        },
      ],
      usage: null,
      obfuscation: "pad".repeat(i % 3),
    })),
    {
      ...head,
      model,
      choices: [],
      usage: { prompt_tokens: 9, completion_tokens: words.length, total_tokens: 9 + words.length },
    },
  ];
  // Python's json.dumps writes a space after each colon and comma.
  return chunks.map((chunk) =>
    options.spaced ? JSON.stringify(chunk).replaceAll('":', '": ').replaceAll(',"', ', "') : JSON.stringify(chunk),
  );
}

const sse = (chunks: string[], lineEnd = "\n", done = true) =>
  [...chunks, ...(done ? ["[DONE]"] : [])].map((data) => `data: ${data}${lineEnd}${lineEnd}`).join("");

/** Runs the relay over `body` cut at `cuts` (byte offsets); returns what it sends and the relay. */
function relayed(body: string, cuts: number[], hideUsageOnly: boolean) {
  const bytes = Buffer.from(body);
  const relay = new SseRelay({ hideUsageOnly, transcript: new Transcript("chat") });
  const sent: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    sent.push(...(relay.push(bytes.subarray(from, cut)) ?? []));
    from = cut;
  }
  sent.push(...(relay.end() ?? []));
  return { text: Buffer.concat(sent).toString("utf8"), relay };
}

/** The data of the events of an SSE text. */
function eventsOf(text: string): string[] {
  const decoder = new SseDecoder();
  return [...decoder.push(Buffer.from(text)), ...decoder.end()].map((event) => event.data);
}

const words = ["Hel", "lo", ' "quoted"', " data: [DONE]", " naïve ✓", "\\n", "!"];

describe("SseRelay", () => {
  it("sends the provider's bytes unchanged, wherever the reads cut them, and notes usage and model", () => {
    const chunks = openaiChunks(words);
    const body = sse(chunks);
    for (let cut = 0; cut <= Buffer.byteLength(body); cut += 7) {
      const { text, relay } = relayed(body, [cut], false);
      expect(text).toBe(body);
      expect(relay.usage).toEqual({ prompt_tokens: 9, completion_tokens: 7, total_tokens: 16 });
      expect(relay.model).toBe("gpt-4o-mini-2024-07-18");
    }
  });

  it("cuts out the usage-only chunk the client did not ask for, and only it", () => {
    const chunks = openaiChunks(words);
    const body = sse(chunks);
    const expected = sse(chunks.slice(0, -1));
    for (let cut = 0; cut <= Buffer.byteLength(body); cut += 5) {
      const { text, relay } = relayed(body, [cut, cut + 3], true);
      expect(text).toBe(expected);
      expect(relay.usage?.total_tokens).toBe(16);
      // The log still sees every chunk the provider sent.
      expect(Buffer.concat(relay.transcript.chunks).toString()).toBe(body);
    }
  });

  it("knows CRLF and lone CR line ends", () => {
    for (const lineEnd of ["\r\n", "\r"]) {
      const chunks = openaiChunks(words);
      const body = sse(chunks, lineEnd);
      for (let cut = 0; cut <= Buffer.byteLength(body); cut += 11) {
        const { text, relay } = relayed(body, [cut], true);
        expect(eventsOf(text)).toEqual([...chunks.slice(0, -1), "[DONE]"]);
        expect(relay.usage?.total_tokens).toBe(16);
      }
    }
  });

  it("reads JSON written with spaces (Python's default) too", () => {
    const chunks = openaiChunks(words, { spaced: true });
    expect(chunks.at(-1)).toContain('"usage": {');
    const { text, relay } = relayed(sse(chunks), [100], true);
    expect(eventsOf(text)).toEqual([...chunks.slice(0, -1), "[DONE]"]);
    expect(relay.usage?.total_tokens).toBe(16);
    expect(relay.model).toBe("gpt-4o-mini-2024-07-18");
  });

  it("adds [DONE] when the provider ends without it, and is not fooled by the text in content", () => {
    const chunks = openaiChunks(["data: [DONE]", "\n\ndata: [DONE]\n\n"]);
    const { text } = relayed(sse(chunks, "\n", false), [], false);
    expect(eventsOf(text)).toEqual([...chunks, "[DONE]"]);
    const once = relayed(sse(chunks), [], false).text;
    expect(eventsOf(once).filter((data) => data === "[DONE]")).toHaveLength(1);
  });

  it("releases nothing before the first event with data (a stream that fails first can still fall back)", () => {
    const relay = new SseRelay({ hideUsageOnly: false, transcript: new Transcript("chat") });
    expect(relay.push(Buffer.from(": keep-alive\n\n"))).toBeUndefined();
    expect(relay.push(Buffer.from('event: ping\n\ndata: {"id":"a","model":"m1"}'))).toBeUndefined();
    const sent = relay.push(Buffer.from("\n\n"));
    expect(Buffer.concat(sent!).toString()).toBe(': keep-alive\n\nevent: ping\n\ndata: {"id":"a","model":"m1"}\n\n');
    expect(relay.model).toBe("m1");
  });

  it("ends a last event that has no blank line after it", () => {
    const { text } = relayed('data: {"id":"a","model":"m","choices":[]}', [], false);
    expect(text).toBe('data: {"id":"a","model":"m","choices":[]}\n\ndata: [DONE]\n\n');
  });

  it("takes the model from the first chunk that names one (Azure's first chunk has an empty model)", () => {
    const azureFirst = JSON.stringify({
      choices: [],
      created: 0,
      id: "",
      model: "",
      object: "",
      prompt_filter_results: [],
    });
    const chunks = [azureFirst, ...openaiChunks(["a"], { model: 'gpt-4o "x"' })];
    const { relay } = relayed(sse(chunks), [], false);
    expect(relay.model).toBe('gpt-4o "x"');
  });

  it("gives the log the same answer as assembling the chunks", () => {
    const chunks = openaiChunks(words);
    for (const lineEnd of ["\n", "\r\n"]) {
      const { relay } = relayed(sse(chunks, lineEnd), [50, 400], true);
      const answer = relay.transcript.answer();
      expect(answer).toBeInstanceOf(StreamTranscript);
      const fromTranscript = (answer as StreamTranscript).assemble();
      expect(fromTranscript).toEqual(assembleStream(chunks, "chat"));
      expect(fromTranscript).toMatchObject({
        model: "gpt-4o-mini-2024-07-18",
        choices: [{ message: { content: words.join("") }, finish_reason: "stop" }],
        usage: { total_tokens: 16 },
      });
    }
  });

  it("relays what an upstream sends that is not a chunk (an error event) as it came", () => {
    const body = 'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n';
    const { text, relay } = relayed(body, [10], true);
    expect(text).toBe(`${body}data: [DONE]\n\n`);
    expect(relay.usage).toBeUndefined();
    expect(relay.model).toBeUndefined();
  });

  it("agrees with decoding and transforming the stream on random chunks, line ends, comments and reads", () => {
    // Seeded: the same cases on every run. The reference is the pipeline every other provider's stream takes:
    // decode events, pass OpenAI chunks through, hide the usage-only chunk, end with one [DONE].
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)]!;
    const alphabet = ['"', "\\", "}", "{", ":", "a", " ", "é", "😀", "\n", "\r", "[DONE]", '"usage":{', "data: "];
    const text = () => Array.from({ length: Math.floor(random() * 6) }, () => pick(alphabet)).join("");
    for (let round = 0; round < 300; round++) {
      const spaced = random() < 0.3;
      const chunks = openaiChunks(Array.from({ length: 1 + Math.floor(random() * 5) }, text), {
        spaced,
        model: `m-${text()}`,
      });
      if (random() < 0.3) chunks.pop(); // no usage reported
      const lineEnd = pick(["\n", "\n", "\r\n", "\r"]);
      const events = chunks.map(
        (data) => `${random() < 0.1 ? `: ping${lineEnd}` : ""}data: ${data}${lineEnd}${lineEnd}`,
      );
      const done = random() < 0.8;
      const body = Buffer.from(events.join("") + (done ? `data: [DONE]${lineEnd}${lineEnd}` : ""));
      const cuts = Array.from({ length: Math.floor(random() * 4) }, () => Math.floor(random() * body.length)).sort(
        (a, b) => a - b,
      );
      const includeUsage = random() < 0.5;

      const { text: sent, relay } = relayed(body.toString(), cuts, !includeUsage);

      const transformer = passthroughTransformer();
      const decoder = new SseDecoder();
      const expected: string[] = [];
      let usage: unknown;
      for (const event of [...decoder.push(body), ...decoder.end()]) {
        for (const chunk of transformer.push(event) as string[]) {
          const parsed = JSON.parse(chunk);
          if (parsed.usage) usage = parsed.usage;
          if (!includeUsage && parsed.usage && parsed.choices.length === 0) continue;
          expected.push(chunk);
        }
      }
      expect(eventsOf(sent)).toEqual([...expected, "[DONE]"]);
      expect(relay.usage).toEqual(usage);
      expect(relay.model).toBe(JSON.parse(chunks[0]!).model || undefined);
      expect((relay.transcript.answer() as StreamTranscript).assemble()).toEqual(assembleStream(chunks, "chat"));
    }
  });

  it("folds a long answer as it comes instead of keeping its chunks", () => {
    const many = Array.from({ length: 600 }, (_, i) => ` w${i}`);
    const chunks = openaiChunks(many);
    const { relay } = relayed(sse(chunks), [70_000], true);
    expect(relay.transcript.chunks).toHaveLength(0);
    const answer = relay.transcript.answer();
    expect(answer).not.toBeInstanceOf(StreamTranscript);
    expect(answer).toEqual(assembleStream(chunks, "chat"));
    expect(answer).toMatchObject({ choices: [{ message: { content: many.join("") } }], usage: { total_tokens: 609 } });
  });
});
