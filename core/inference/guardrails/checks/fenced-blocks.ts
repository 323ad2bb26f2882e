/**
 * Markdown fenced blocks (``` or ~~~, as CommonMark reads them) in a text, for the checks that look for JSON
 * or code in an answer. One pass over the lines.
 */

export interface FencedBlock {
  /** The info string's first word, lower-cased ("" when the fence names none). */
  language: string;
  content: string;
  /** false: the text ended inside the block (a cut-off answer). */
  closed: boolean;
}

export interface FencedText {
  blocks: FencedBlock[];
  /** The lines outside the blocks, one array per stretch between two blocks. */
  outside: string[][];
}

const OPENING = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const CLOSING = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

export function splitFences(text: string): FencedText {
  const blocks: FencedBlock[] = [];
  const outside: string[][] = [[]];
  let open: { fence: string; language: string; lines: string[] } | undefined;
  for (const rawLine of text.split("\n")) {
    const line = rawLine.endsWith("\r") ? rawLine.slice(0, -1) : rawLine;
    if (open) {
      const closing = CLOSING.exec(line);
      if (closing && closing[1]![0] === open.fence[0] && closing[1]!.length >= open.fence.length) {
        blocks.push({ language: open.language, content: open.lines.join("\n"), closed: true });
        open = undefined;
        outside.push([]);
      } else {
        open.lines.push(line);
      }
      continue;
    }
    const opening = OPENING.exec(line);
    const info = opening?.[2]?.trim() ?? "";
    // A backtick fence's info string has no backticks (else it is inline code on one line).
    if (opening && !(opening[1]![0] === "`" && info.includes("`"))) {
      open = { fence: opening[1]!, language: (info.split(/\s/)[0] ?? "").toLowerCase(), lines: [] };
    } else {
      outside.at(-1)!.push(line);
    }
  }
  if (open) blocks.push({ language: open.language, content: open.lines.join("\n"), closed: false });
  return { blocks, outside: outside.filter((lines) => lines.length > 0) };
}
