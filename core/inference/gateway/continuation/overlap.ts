/**
 * The seam between a broken answer and its continuation. A target asked to continue an answer (prefill, or an
 * instruction to go on) mostly picks up exactly where it stopped; sometimes it restarts the word it was in, or
 * the last few words ("The quick bro" + "brown fox"), and a prefill cut of its trailing space may be answered
 * with a leading one. What the client already has must not come twice: the continuation's first characters are
 * held until it is clear whether they repeat the end of the partial answer, and a repeat is cut.
 *
 * Only restarts at a word boundary of the partial answer count (its whole last word, or more words), so that a
 * continuation that happens to begin with the partial answer's last letter ("Hello" + "o") is not cut.
 */

/** The most of the partial answer's end a continuation may repeat (characters). */
const MAX_OVERLAP = 200;

export class OverlapTrimmer {
  /** Ends of the partial answer the continuation may restart from, longest first (each at a word boundary). */
  readonly #candidates: string[];
  /** The partial answer ends with white space (a prefill may have been sent without it). */
  readonly #endsWithSpace: boolean;
  /** Continuation text held while a candidate may still match it. */
  #held = "";
  #decided = false;

  constructor(partial: string) {
    const tail = partial.slice(-MAX_OVERLAP);
    this.#endsWithSpace = /\s$/.test(partial);
    const candidates: string[] = [];
    // Every start of a word in the tail (after white space or punctuation), and the tail's start when it is the
    // whole partial answer.
    for (let at = 0; at < tail.length; at++) {
      const startsWord = at === 0 ? tail.length === partial.length : /[\s([{"'“‘]/.test(tail[at - 1]!);
      if (startsWord && /\S/.test(tail[at]!)) candidates.push(tail.slice(at));
    }
    this.#candidates = candidates;
  }

  /** The part of this piece of the continuation to send (empty while held). */
  push(text: string): string {
    if (this.#decided) return text;
    this.#held += text;
    let held = this.#held;
    if (this.#endsWithSpace) {
      held = held.replace(/^\s+/, "");
      if (held === "") return "";
    }
    // Still open: a candidate longer than what is held that what is held is the start of.
    if (this.#candidates.some((candidate) => candidate.length > held.length && candidate.startsWith(held))) return "";
    return this.#decide(held);
  }

  /** The continuation ended: whatever is still held, trimmed. */
  end(): string {
    if (this.#decided) return "";
    const held = this.#endsWithSpace ? this.#held.replace(/^\s+/, "") : this.#held;
    return this.#decide(held);
  }

  #decide(held: string): string {
    this.#decided = true;
    this.#held = "";
    const repeated = this.#candidates.find((candidate) => held.startsWith(candidate));
    return repeated ? held.slice(repeated.length) : held;
  }
}
