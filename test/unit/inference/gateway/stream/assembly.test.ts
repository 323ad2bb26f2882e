import { describe, expect, it, vi } from "vitest";
import { StreamAssembler, assembleStream } from "../../../../../core/inference/gateway/stream/assembly.ts";

const chunk = (delta: object, finish: string | null = null, index = 0) =>
  JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index, delta, finish_reason: finish }],
  });

describe("stream assembly for logs", () => {
  it("folds content, tool-call fragments, finish reasons and usage into one answer", () => {
    const assembled = assembleStream([
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Hel" }),
      {
        id: "chatcmpl-1",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{ index: 0, delta: { content: "lo" }, finish_reason: null }],
      },
      chunk({
        tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_", arguments: '{"ci' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { name: "weather", arguments: 'ty":"Paris"}' } }] }),
      chunk({}, "tool_calls"),
      chunk({ content: "second" }, "stop", 1),
      JSON.stringify({
        id: "chatcmpl-1",
        choices: [],
        usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      }),
      "not json",
    ]);
    expect(assembled).toMatchObject({
      id: "chatcmpl-1",
      object: "chat.completion",
      model: "m",
      usage: { total_tokens: 7 },
      streamed_chunks: 9,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "Hello",
            tool_calls: [
              { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
            ],
          },
          finish_reason: "tool_calls",
        },
        { index: 1, message: { content: "second" }, finish_reason: "stop" },
      ],
    });
  });

  it("folds text completions", () => {
    const part = (text: string, finish: string | null = null) =>
      JSON.stringify({
        id: "cmpl-1",
        object: "text_completion",
        created: 1,
        model: "m",
        choices: [{ index: 0, text, finish_reason: finish }],
      });
    expect(assembleStream([part("Hello"), part(" world", "stop")])).toMatchObject({
      object: "text_completion",
      choices: [{ index: 0, text: "Hello world", finish_reason: "stop" }],
    });
  });

  it("reads content-only chunks from their text exactly as parsing them whole would", () => {
    // OpenAI's field order: the content-only shortcut applies to these; other shapes fall back to JSON.parse.
    const openai = (choice: object, extra: object = {}) =>
      JSON.stringify({
        id: "chatcmpl-2",
        object: "chat.completion.chunk",
        created: 1,
        model: "gpt-4o-mini",
        system_fingerprint: "fp_1",
        choices: [choice],
        ...extra,
      });
    const content = (text: string, index = 0) => ({
      index,
      delta: { content: text },
      logprobs: null,
      finish_reason: null,
    });
    const texts = ['say "hi"', "back\\slash", "line\nbreak", "tab\t", "é ✓ 😀", "\u0000 nul", '"}]}', ""];
    const chunks = [
      openai({ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }),
      ...texts.map((text) => openai(content(text))),
      openai(content("other choice", 1)),
      openai(content("with a field after choices"), { obfuscation: "abc" }),
      openai({ index: 0, delta: { content: "and a finish" }, logprobs: null, finish_reason: "stop" }),
      openai({ index: 0, delta: { content: "x", extra: 1 }, logprobs: null, finish_reason: null }),
    ];
    const parsedWhole = chunks.map((text) => JSON.parse(text) as object);
    expect(assembleStream(chunks)).toEqual(assembleStream(parsedWhole));
    expect((assembleStream(chunks).choices as Array<{ message: { content: string } }>)[0]!.message.content).toBe(
      `${texts.join("")}with a field after choicesand a finishx`,
    );
  });

  it("reads OpenAI's chunks with `usage: null` and `obfuscation` from their text, parsing only the others", () => {
    // As OpenAI streams when usage is asked for (the gateway always asks): `"usage":null` on every chunk but the
    // last, and (by default) an `obfuscation` field of padding; the last chunk has no choices and the usage.
    const openai = (fields: object) =>
      JSON.stringify({
        id: "chatcmpl-3",
        object: "chat.completion.chunk",
        created: 2,
        model: "gpt-4o-mini-2024-07-18",
        service_tier: "default",
        system_fingerprint: "fp_2",
        ...fields,
      });
    const content = (text: string) => [{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }];
    const first = openai({
      choices: [
        { index: 0, delta: { role: "assistant", content: "", refusal: null }, logprobs: null, finish_reason: null },
      ],
      usage: null,
      obfuscation: "k3",
    });
    const contentOnly = [
      openai({ choices: content("Bon"), usage: null, obfuscation: "xQ9" }),
      openai({ choices: content("jour"), obfuscation: "a", usage: null }),
      openai({ choices: content(' "usage":{"x":1}'), usage: null }),
      openai({ choices: content("!"), obfuscation: 'q\\"z' }),
    ];
    const last = openai({
      choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }],
      usage: null,
      obfuscation: "Zp",
    });
    const usage = openai({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 } });
    const chunks = [first, ...contentOnly, last, usage];

    const parse = vi.spyOn(JSON, "parse");
    const assembler = new StreamAssembler();
    let returned: Array<Record<string, any> | undefined>;
    let parsedTexts: string[];
    try {
      returned = chunks.map((chunk) => assembler.add(chunk));
      parsedTexts = parse.mock.calls.map(([text]) => text);
    } finally {
      parse.mockRestore();
    }
    const parsedWholeTexts = parsedTexts.filter((text) => text.startsWith("{"));
    expect(parsedWholeTexts).toEqual([first, last, usage]);
    // What the pipeline reads from add(): the parsed chunks (model, usage), nothing for content-only ones.
    expect(returned.map((value) => value === undefined)).toEqual([false, true, true, true, true, false, false]);
    expect(returned[6]).toMatchObject({ usage: { total_tokens: 9 }, choices: [] });

    const answer = assembler.result();
    expect(answer).toEqual(assembleStream(chunks.map((text) => JSON.parse(text) as object)));
    expect(answer).toMatchObject({
      id: "chatcmpl-3",
      model: "gpt-4o-mini-2024-07-18",
      usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
      streamed_chunks: 7,
      choices: [
        { index: 0, message: { role: "assistant", content: 'Bonjour "usage":{"x":1}!' }, finish_reason: "stop" },
      ],
    });
  });

  it("agrees with parsing every chunk whole on random texts, paddings, tails and cut-off chunks", () => {
    // A seeded generator: the same cases on every run. The alphabet holds every character the text scan decides on.
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const alphabet = ['"', "\\", "}", "]", "{", ",", ":", "a", " ", "é", "😀", "\n", "u"];
    const text = () =>
      Array.from({ length: Math.floor(random() * 8) }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
    const tails = [{}, { usage: null }, { obfuscation: "p" }, { usage: null, obfuscation: "q" }, { x: 1 }];
    const head = JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [] });
    // Text that is not JSON still counts as a streamed chunk, and adds nothing.
    const reference = (chunks: string[]) =>
      assembleStream(
        chunks.map((chunk) => {
          try {
            return JSON.parse(chunk) as object;
          } catch {
            return {};
          }
        }),
      );
    for (let round = 0; round < 300; round++) {
      const chunks = [head];
      /** Chunks that must be parsed whole: the first, and those that are not content-only or not whole. */
      const parsedWhole = [head];
      for (let i = 0; i < 6; i++) {
        const tail = { ...tails[Math.floor(random() * tails.length)] } as Record<string, unknown>;
        if ("obfuscation" in tail) tail.obfuscation = text();
        const choice = {
          index: Math.floor(random() * 3),
          delta: { content: text() },
          logprobs: null,
          finish_reason: null,
        };
        let chunk = JSON.stringify({
          id: "c",
          object: "chat.completion.chunk",
          created: 1,
          model: "m",
          choices: [choice],
          ...tail,
        });
        // Now and then a chunk cut off (a provider's bug), or with a byte of garbage after it.
        let whole = true;
        if (random() < 0.1) {
          // At least the opening brace: the check below tells a chunk parsed whole by its leading "{".
          chunk = chunk.slice(0, 1 + Math.floor(random() * (chunk.length - 1)));
          whole = false;
        } else if (random() < 0.05) {
          chunk += "x";
          whole = false;
        }
        if (!whole || "x" in tail) parsedWhole.push(chunk);
        chunks.push(chunk);
      }
      const parse = vi.spyOn(JSON, "parse");
      let assembled: Record<string, unknown>;
      try {
        assembled = assembleStream(chunks);
        // Content-only chunks are read from their text: only the others reach JSON.parse whole.
        expect(parse.mock.calls.map(([text]) => text).filter((text) => text.startsWith("{"))).toEqual(parsedWhole);
      } finally {
        parse.mockRestore();
      }
      expect(assembled).toEqual(reference(chunks));
    }
  });

  it("never fails on text that is not a chunk", () => {
    const assembler = new StreamAssembler();
    for (const text of ["null", "42", '"text"', "[1]", '{"choices":{"not":"a list"}}', "{", ""]) {
      expect(() => assembler.add(text)).not.toThrow();
    }
    expect(assembler.result()).toMatchObject({ choices: [], streamed_chunks: 7 });
  });

  it("survives malformed tool calls without touching shared prototypes", () => {
    const assembler = new StreamAssembler("chat");
    const toolChunk = (calls: unknown[]) =>
      JSON.stringify({
        id: "x",
        object: "chat.completion.chunk",
        choices: [{ index: 0, delta: { tool_calls: calls } }],
      });
    for (const calls of [
      [null],
      ["text"],
      [{ index: "__proto__", id: "polluted", function: { name: "p" } }],
      [{ index: 1e9, id: "huge" }],
      [{ index: -1, id: "negative" }],
      [{ index: 0, id: "call_1", function: null }],
      [{ index: 0, function: { name: 42, arguments: '{"a":1}' } }],
    ]) {
      expect(() => assembler.add(toolChunk(calls))).not.toThrow();
    }
    expect(() => assembler.add(JSON.stringify({ id: "x", choices: [null, "text", { delta: null }] }))).not.toThrow();
    expect(([] as unknown as { id?: string }).id).toBeUndefined();
    expect(assembler.result()).toMatchObject({
      choices: [{ message: { tool_calls: [{ id: "call_1", function: { name: "", arguments: '{"a":1}' } }] } }],
    });
  });

  it("keeps a completions stream's text whatever its chunks call themselves (the route decides)", () => {
    const chunks = [
      JSON.stringify({ id: "", object: "text_completion.chunk", choices: [{ index: 0, text: "Hello" }] }),
      JSON.stringify({ choices: [{ index: 0, text: " world", finish_reason: "stop" }] }),
    ];
    expect(assembleStream(chunks, "text")).toMatchObject({
      object: "text_completion",
      choices: [{ index: 0, text: "Hello world", finish_reason: "stop" }],
    });
  });

  it("reads usage sent before `choices` in a chunk that otherwise only adds text", () => {
    const assembler = new StreamAssembler("chat");
    const head = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
    const text = (content: string, extra: object = {}) =>
      JSON.stringify({
        ...head,
        ...extra,
        choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }],
      });
    assembler.add(text("a"));
    expect(assembler.add(text("b", { usage: null }))).toBeUndefined();
    const usage = { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 };
    expect(assembler.add(text("c", { usage }))).toMatchObject({ usage });
    expect(assembler.result()).toMatchObject({ usage, choices: [{ message: { content: "abc" } }] });
  });

  it("drops a piece whose JSON string holds a raw control character, as parsing it whole would", () => {
    const head = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m",';
    const piece = (raw: string) =>
      `${head}"choices":[{"index":0,"delta":{"content":"${raw}"},"logprobs":null,"finish_reason":null}]}`;
    const assembler = new StreamAssembler("chat");
    assembler.add(piece("start "));
    expect(() => JSON.parse(piece("bad\u0001"))).toThrow();
    assembler.add(piece("bad\u0001"));
    assembler.add(piece("end"));
    expect(assembler.result()).toMatchObject({ choices: [{ message: { content: "start end" } }] });
  });
});
