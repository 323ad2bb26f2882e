import type { Tiktoken } from "js-tiktoken/lite";

/**
 * Token counting for when a provider omits usage. OpenAI-family models are counted with the o200k/cl100k
 * encodings (loaded lazily: the rank tables are large); other models are estimated with the same encoding,
 * which is close for most modern tokenizers. Callers mark such usage as estimated.
 *
 * The work is bounded, since any tenant can send the text (a prompt, or an answer from a custom host):
 * - js-tiktoken's byte-pair merge is quadratic in the length of one pre-tokenizer piece, and a run of one
 *   character class is one piece, so runs are cut into short slices (a cut costs at most a token or two;
 *   ordinary words are far shorter than a slice and are never cut);
 * - text is encoded in small chunks, yielding to the event loop whenever a slice of work has run long;
 * - past a budget of work, the rest is extrapolated from the ratio of tokens to characters so far. A slice of a
 *   long run costs the encoder many times what ordinary text does, so it counts for more of the budget; slices
 *   repeated within a text (a run of one character) are encoded once.
 */

/** Longest run of non-space (or of space) characters encoded as one piece. */
export const MAX_RUN_CHARS = 48;
/** Characters per encode call (cut before a space, so a word and its leading space stay together). */
const CHUNK_CHARS = 1024;
/** Characters of ordinary text counted exactly; the rest of a longer text is extrapolated. */
export const EXACT_COUNT_CHARS = 256 * 1024;
/** How many ordinary characters one character of a run slice costs (the encoder's cost per character). */
const RUN_CHAR_COST = 16;
/** Distinct run slices remembered within one count. */
const MAX_REMEMBERED_SLICES = 1024;
/** Work done between two yields to the event loop. */
const SLICE_MS = 4;

let o200k: Promise<Tiktoken> | undefined;
let cl100k: Promise<Tiktoken> | undefined;

async function encoderFor(model: string): Promise<Tiktoken> {
  if (/^(gpt-4($|-)|gpt-4-|gpt-3\.5|text-embedding-(ada|3))/.test(model)) {
    cl100k ??= import("js-tiktoken/ranks/cl100k_base").then((ranks) => buildEncoder(ranks.default));
    return cl100k;
  }
  o200k ??= import("js-tiktoken/ranks/o200k_base").then((ranks) => buildEncoder(ranks.default));
  return o200k;
}

interface Ranks {
  pat_str: string;
  special_tokens: Record<string, number>;
  bpe_ranks: string;
}

/**
 * An encoder built a slice at a time. js-tiktoken's constructor decodes its whole rank table (some 200,000
 * tokens) at once, which held the event loop for seconds on the first request that needed a count: it is
 * given an empty table here, and its two maps are filled as its constructor fills them (same keys and values:
 * test/unit/inference/catalog/tokens.test.ts compares counts with an encoder the library built), yielding between slices.
 */
async function buildEncoder(ranks: Ranks): Promise<Tiktoken> {
  const { Tiktoken: Encoder } = await import("js-tiktoken/lite");
  const encoder = new Encoder({ ...ranks, bpe_ranks: "" });
  const maps = encoder as unknown as { rankMap: Map<string, number>; textMap: Map<number, Uint8Array> };
  const table = ranks.bpe_ranks;
  let sliceStart = performance.now();
  // Lines of `<prefix> <first rank> <base64 token> <base64 token> ...`, ranks counting up from the first.
  for (let lineStart = 0; lineStart < table.length; ) {
    let lineEnd = table.indexOf("\n", lineStart);
    if (lineEnd === -1) lineEnd = table.length;
    const fields = { start: lineStart, index: 0 };
    let rank = 0;
    while (fields.start < lineEnd) {
      let end = table.indexOf(" ", fields.start);
      if (end === -1 || end > lineEnd) end = lineEnd;
      const field = table.slice(fields.start, end);
      fields.start = end + 1;
      const index = fields.index++;
      if (index === 1) rank = Number.parseInt(field, 10);
      if (index < 2 || field === "") continue;
      const bytes = new Uint8Array(Buffer.from(field, "base64"));
      maps.rankMap.set(bytes.join(","), rank);
      maps.textMap.set(rank, bytes);
      rank++;
      if ((rank & 1023) === 0 && performance.now() - sliceStart > SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = performance.now();
      }
    }
    lineStart = lineEnd + 1;
  }
  return encoder;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function countTokens(model: string, text: string): Promise<number> {
  return countTokensOfParts(model, [text]);
}

/**
 * The tokens of texts counted as one (without joining them: a long text would be copied whole). Bounded as
 * described above; past the budget, the rest is extrapolated from the ratio of tokens to characters so far.
 */
export async function countTokensOfParts(model: string, parts: string[]): Promise<number> {
  let length = 0;
  for (const part of parts) length += part.length;
  if (length === 0) return 0;
  const encoder = await encoderFor(model);
  const slices = new Map<string, number>();
  let tokens = 0;
  let counted = 0;
  let budget = EXACT_COUNT_CHARS;
  let sliceStart = performance.now();
  for (const part of parts) {
    for (const chunk of boundedChunks(part, Math.min(part.length, budget))) {
      if (isRunSlice(chunk)) {
        let count = slices.get(chunk);
        if (count === undefined) {
          count = encoder.encode(chunk, "all").length;
          budget -= chunk.length * RUN_CHAR_COST;
          if (slices.size < MAX_REMEMBERED_SLICES) slices.set(chunk, count);
        } else budget -= chunk.length;
        tokens += count;
      } else {
        tokens += encoder.encode(chunk, "all").length;
        budget -= chunk.length;
      }
      counted += chunk.length;
      if (budget <= 0) break;
      if (performance.now() - sliceStart > SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = performance.now();
      }
    }
    if (budget <= 0) break;
  }
  if (counted === length) return tokens;
  return Math.round((tokens / counted) * length);
}

/** A slice cut from a long run: all spaces, or no space at all. */
function isRunSlice(chunk: string): boolean {
  return chunk.length >= MAX_RUN_CHARS && (!/\s/.test(chunk) || !/\S/.test(chunk));
}

/**
 * The first `end` characters of `text` as chunks of at most CHUNK_CHARS, none holding a run of more than
 * MAX_RUN_CHARS spaces or non-spaces. Linear in `end`.
 */
export function* boundedChunks(text: string, end: number): Generator<string> {
  let chunkStart = 0;
  let runStart = 0;
  let runIsSpace = false;
  let lastSpaceStart = -1;
  for (let i = 0; i < end; i++) {
    const isSpace = isWhitespace(text.charCodeAt(i));
    if (i === chunkStart || isSpace !== runIsSpace) {
      runStart = i;
      runIsSpace = isSpace;
      if (isSpace && i > chunkStart) lastSpaceStart = i;
    } else if (i - runStart >= MAX_RUN_CHARS && !isLowSurrogate(text.charCodeAt(i))) {
      // A long run: cut it here (never between the halves of a surrogate pair).
      yield text.slice(chunkStart, i);
      chunkStart = runStart = i;
      lastSpaceStart = -1;
      continue;
    }
    if (i - chunkStart >= CHUNK_CHARS) {
      const cut = lastSpaceStart > chunkStart ? lastSpaceStart : i;
      yield text.slice(chunkStart, cut);
      chunkStart = cut;
      lastSpaceStart = -1;
    }
  }
  if (chunkStart < end) yield text.slice(chunkStart, end);
}

function isWhitespace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0x3000 || code === 0x2028;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Prompt tokens of chat messages: text of every message plus the per-message framing OpenAI documents. */
export async function countChatPromptTokens(model: string, messages: Array<Record<string, any>>): Promise<number> {
  const parts: string[] = [];
  for (const message of messages) {
    parts.push(`${message.role ?? ""}\n`, contentText(message.content), "\n");
    if (message.tool_calls) parts.push(JSON.stringify(message.tool_calls));
  }
  return (await countTokensOfParts(model, parts)) + messages.length * 3 + 3;
}

export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof part === "string" ? part : typeof part?.text === "string" ? part.text : ""))
      .join("");
  }
  return "";
}
