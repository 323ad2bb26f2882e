import { describe, expect, it } from "vitest";
import { readLines } from "../../../../core/features/batches/line-reader.ts";
import { checkInput, MAX_REPORTED_ERRORS } from "../../../../core/features/batches/validate-input.ts";

const streamOf = (...chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

const line = (customId: string, content = "hi") =>
  JSON.stringify({
    custom_id: customId,
    method: "POST",
    url: "/v1/chat/completions",
    body: { model: "m", messages: [{ role: "user", content }] },
  });

describe("readLines", () => {
  it("splits lines across chunk boundaries, accepts CRLF, and numbers blank lines", async () => {
    const lines = [];
    for await (const raw of readLines(streamOf("ab", "c\r\n\nd", "ef\n"), 100)) lines.push(raw);
    expect(lines).toEqual([
      { line: 1, text: "abc", tooLong: false },
      { line: 2, text: "", tooLong: false },
      { line: 3, text: "def", tooLong: false },
    ]);
  });

  it("reports a line over the limit without holding it, and goes on after it", async () => {
    const lines = [];
    for await (const raw of readLines(streamOf("x".repeat(50), "y".repeat(50), "\nok"), 60)) lines.push(raw);
    expect(lines).toEqual([
      { line: 1, text: "", tooLong: true },
      { line: 2, text: "ok", tooLong: false },
    ]);
  });
});

describe("checkInput", () => {
  const limits = { maxLines: 5, maxLineBytes: 10_000 };

  it("counts the requests of a valid file and names the model they share", async () => {
    const check = await checkInput(streamOf(`${line("a")}\n${line("b")}\n`), "/v1/chat/completions", limits);
    expect(check).toEqual({ errors: [], total: 2, model: "m" });
  });

  it("fails a file over the line limit", async () => {
    const text = Array.from({ length: 6 }, (_, i) => line(`l${i}`)).join("\n");
    const check = await checkInput(streamOf(text), "/v1/chat/completions", limits);
    expect(check.errors).toEqual([expect.objectContaining({ code: "too_many_requests", line: 6 })]);
  });

  it("refuses streaming lines and lines too long", async () => {
    const streaming = JSON.stringify({
      ...JSON.parse(line("s")),
      body: { model: "m", messages: [{ role: "user", content: "x" }], stream: true },
    });
    const check = await checkInput(streamOf(`${streaming}\n${"x".repeat(200)}\n`), "/v1/chat/completions", {
      maxLines: 5,
      maxLineBytes: 150,
    });
    expect(check.errors.map((error) => [error.line, error.code, error.param])).toEqual([
      [1, "invalid_request", "body.stream"],
      [2, "line_too_long", null],
    ]);
  });

  it("keeps at most MAX_REPORTED_ERRORS errors and says how many more there were", async () => {
    const text = Array.from({ length: MAX_REPORTED_ERRORS + 50 }, () => "nope").join("\n");
    const check = await checkInput(streamOf(text), "/v1/chat/completions", { maxLines: 10_000, maxLineBytes: 100 });
    expect(check.errors).toHaveLength(MAX_REPORTED_ERRORS);
    expect(check.errors.at(-1)).toMatchObject({ code: "too_many_errors", message: expect.stringContaining("51 more") });
  });
});
