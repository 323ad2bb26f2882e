import type { Finding } from "./categories.ts";

/**
 * Credentials by their published shapes: provider API keys (OpenAI `sk-`, `sk-proj-`; Anthropic `sk-ant-`),
 * AWS access key ids, GitHub, Slack, Google and Stripe tokens, JWTs and PEM private key blocks. Every pattern
 * starts with a literal at a token boundary and has bounded repetitions, so a long text costs linear time.
 */

interface SecretShape {
  pattern: RegExp;
  /** What the pattern cannot say cheaply. */
  accept?(match: string): boolean;
}

const TOKEN_START = "(?<![A-Za-z0-9_\\-])";
const TOKEN_END = "(?![A-Za-z0-9_\\-])";
const shape = (body: string, accept?: SecretShape["accept"]): SecretShape => ({
  pattern: new RegExp(TOKEN_START + body + TOKEN_END, "g"),
  accept,
});

const SHAPES: readonly SecretShape[] = [
  // OpenAI (legacy, project, service account, admin) and Anthropic keys: random, so never without a digit.
  shape("sk-[A-Za-z0-9_\\-]{20,512}", (key) => /\d/.test(key.slice(3)) && /[A-Za-z]/.test(key.slice(3))),
  shape("(?:AKIA|ASIA)[A-Z0-9]{16}"),
  shape("gh[pousr]_[A-Za-z0-9]{36,255}"),
  shape("github_pat_[A-Za-z0-9_]{22,255}"),
  shape("xox[abprs]-[A-Za-z0-9\\-]{10,255}"),
  shape("AIza[A-Za-z0-9_\\-]{35}"),
  shape("(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,255}"),
  // header.payload.signature, both JSON objects in base64url (so `eyJ`); the signature is empty for alg none.
  {
    pattern:
      /(?<![A-Za-z0-9_\-.])eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,16384}\.[A-Za-z0-9_-]{0,1024}(?![A-Za-z0-9_-])/g,
  },
];

const PEM_BEGIN = /-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY-----/g;
const PEM_END = /-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY-----/g;
/** One line of a block's base64. A block without its END line (cut short in a paste) is hidden up to the
 * last line that is only base64, so the prose after it stays. */
const PEM_LINE = /[ \t]*\r?\n[A-Za-z0-9+/=]{1,76}[ \t]*(?=\r?\n|$)/y;

export function findSecrets(text: string): Finding[] {
  const found: Finding[] = findPrivateKeyBlocks(text);
  for (const { pattern, accept } of SHAPES) {
    for (const match of text.matchAll(pattern)) {
      if (accept && !accept(match[0])) continue;
      found.push({ category: "SECRET", start: match.index, end: match.index + match[0].length });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

function findPrivateKeyBlocks(text: string): Finding[] {
  const found: Finding[] = [];
  // The next END line is searched for once per stretch of text, not once per BEGIN line.
  let end: RegExpExecArray | null | undefined;
  for (const begin of text.matchAll(PEM_BEGIN)) {
    const bodyStart = begin.index + begin[0].length;
    if (begin.index < (found.at(-1)?.end ?? 0)) continue;
    if (end !== null && (end === undefined || end.index < bodyStart)) {
      PEM_END.lastIndex = bodyStart;
      end = PEM_END.exec(text);
    }
    if (end) {
      found.push({ category: "SECRET", start: begin.index, end: end.index + end[0].length });
    } else {
      let blockEnd = bodyStart;
      PEM_LINE.lastIndex = bodyStart;
      while (PEM_LINE.exec(text)) blockEnd = PEM_LINE.lastIndex;
      found.push({ category: "SECRET", start: begin.index, end: blockEnd });
    }
  }
  return found;
}
