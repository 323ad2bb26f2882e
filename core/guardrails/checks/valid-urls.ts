import { isIP } from "node:net";
import * as z from "zod";
import type { CheckDefinition } from "../types.ts";
import { resolveHosts } from "./dns-hosts.ts";

/**
 * `default.validUrls`: passes when every URL in the text is an http(s) URL with a valid host: an IP address,
 * `localhost`, or a DNS name (labels of letters, digits and `-`, a top-level domain of letters). With `onlyDNS`
 * (Portkey's name) each host name must also resolve in DNS: a lookup, never a connection (Portkey's default
 * mode sends a HEAD request to every URL; this gateway never lets a check make the text's URLs fetch anything).
 * `not` inverts. A text without URLs passes: none of its URLs is invalid. The verdict names hosts, never the
 * URLs (their paths and queries may hold tokens).
 */

/** Distinct host names one check resolves at most: the rest of a long list would only hold the request. */
export const MAX_RESOLVED_HOSTS = 25;

const parameters = z.object({
  onlyDNS: z.boolean().default(false),
  not: z.boolean().default(false),
});

type Parameters = z.infer<typeof parameters>;

// scheme://rest, up to a space, a quote or a character URLs never hold unescaped. The scheme is bounded, so
// finding every URL is linear in the text.
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]{0,15}:\/\/[^\s<>"'`{}|\\^]+/gi;
const TRAILING_PUNCTUATION = /[.,;:!?*_~'"]$/;
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const TOP_LEVEL_DOMAIN = /^([a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/** The URLs of a text, without the punctuation of the sentence around them (a final `.`, an unmatched `)` or `]`). */
export function urlsInText(text: string): string[] {
  return (text.match(URL_IN_TEXT) ?? []).map((found) => {
    let url = found;
    for (;;) {
      if (TRAILING_PUNCTUATION.test(url)) url = url.slice(0, -1);
      else if (url.endsWith(")") && count(url, "(") < count(url, ")")) url = url.slice(0, -1);
      else if (url.endsWith("]") && count(url, "[") < count(url, "]")) url = url.slice(0, -1);
      else return url;
    }
  });
}

const count = (text: string, character: string) => text.split(character).length - 1;

/** Why a URL is not valid (undefined: it is), and its host when it has one. */
function judgeUrl(text: string): { host?: string; problem?: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: "not a URL" };
  }
  const host = url.hostname;
  if (url.protocol !== "http:" && url.protocol !== "https:") return { host, problem: `${url.protocol} URL` };
  if (host.startsWith("[") || isIP(host) || host === "localhost") return { host };
  const name = host.endsWith(".") ? host.slice(0, -1) : host;
  const labels = name.split(".");
  const valid =
    name.length <= 253 &&
    labels.length >= 2 &&
    labels.every((label) => LABEL.test(label)) &&
    TOP_LEVEL_DOMAIN.test(labels.at(-1)!);
  return valid ? { host } : { host, problem: "not a valid host name" };
}

/** A name DNS is asked about (an IP address or localhost needs no lookup). */
const needsLookup = (host: string) => !(host.startsWith("[") || isIP(host) || host === "localhost");

export const validUrls: CheckDefinition<Parameters> = {
  id: "default.validUrls",
  description: "Passes when every URL in the text is an http(s) URL with a valid host (that resolves, with `onlyDNS`).",
  parameters,
  // Its DNS lookups (`onlyDNS`) go out from whichever thread runs it, under the same bounds.
  selfContained: () => true,
  async run(input, { onlyDNS, not }) {
    const urls = urlsInText(input.text);
    const judged = urls.map(judgeUrl);
    const invalid = new Map<string, string>(); // host (or "(no host)") -> why
    for (const { host, problem } of judged) if (problem) invalid.set(host || "(no host)", problem);

    if (onlyDNS) {
      const names = [
        ...new Set(judged.filter((url) => !url.problem && needsLookup(url.host!)).map((url) => url.host!)),
      ];
      if (names.length > MAX_RESOLVED_HOSTS) {
        return {
          verdict: false,
          explanation: `The text has URLs on ${names.length} different hosts; at most ${MAX_RESOLVED_HOSTS} are looked up.`,
          data: { urls: urls.length, hosts: names.length, not },
        };
      }
      for (const [name, found] of await resolveHosts(names, input.signal)) {
        if (!found) invalid.set(name, "does not resolve in DNS");
      }
    }

    const allValid = invalid.size === 0;
    const verdict = allValid !== not;
    const shownInvalid = [...invalid].slice(0, 20).map(([host, problem]) => ({ host: host.slice(0, 253), problem }));
    return {
      verdict,
      explanation:
        urls.length === 0
          ? `The text has no URLs${not ? ", and the inverted check wants an invalid one" : ""}.`
          : allValid
            ? `${urls.length === 1 ? "The URL is" : `All ${urls.length} URLs are`} valid${not ? ", which the inverted check refuses" : ""}.`
            : `${invalid.size} ${invalid.size === 1 ? "host is" : "hosts are"} not valid${not ? ", as the inverted check wants" : ""}.`,
      data: { urls: urls.length, invalid: shownInvalid, checked_dns: onlyDNS, not },
    };
  },
};
