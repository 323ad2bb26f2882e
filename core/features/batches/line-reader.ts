/** One line of a JSONL file: its 1-based number and text, or `tooLong` when it passed the limit (text dropped). */
export interface RawLine {
  line: number;
  text: string;
  tooLong: boolean;
}

const NEWLINE = 0x0a;

/**
 * Splits a byte stream into lines as it arrives: at most one line (up to `maxLineBytes`) is held at a time, so a
 * file of any size is read in bounded memory. A line longer than the limit is reported `tooLong` without its text.
 * `\r\n` endings are accepted; a trailing newline does not make an extra line, blank lines are reported as empty.
 */
export async function* readLines(body: ReadableStream<Uint8Array>, maxLineBytes: number): AsyncIterable<RawLine> {
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let size = 0;
  let tooLong = false;
  let line = 0;
  const finish = (): RawLine => {
    line += 1;
    let text = "";
    if (!tooLong) {
      const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
      text = decoder.decode(bytes);
      if (text.endsWith("\r")) text = text.slice(0, -1);
    }
    const done = { line, text, tooLong };
    parts = [];
    size = 0;
    tooLong = false;
    return done;
  };
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let start = 0;
      while (start < value.length) {
        const end = value.indexOf(NEWLINE, start);
        const stop = end === -1 ? value.length : end;
        if (!tooLong) {
          size += stop - start;
          if (size > maxLineBytes) {
            tooLong = true;
            parts = [];
          } else if (stop > start) parts.push(value.subarray(start, stop));
        }
        if (end === -1) break;
        yield finish();
        start = end + 1;
      }
    }
    if (size > 0 || tooLong) yield finish();
  } finally {
    // Stopped early (a validation limit) or done: either way the file's stream is released.
    await reader.cancel().catch(() => {});
  }
}
