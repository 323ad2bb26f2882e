/**
 * The web console's static files (console/, built into dist/console/ by scripts/build.ts): the port a
 * platform implements to read them, and the headers every console answer carries. Locally the gateway serves
 * them (core/platform/local/console-files.ts); on AWS the Router serves them from a bucket (infra/console.ts)
 * and no function gets the `console` route family.
 */

export interface ConsoleFile {
  body: Uint8Array;
  contentType: string;
  /** A content-hashed asset (`assets/index-3f2a9c.js`): cacheable for a year, never revalidated. */
  immutable: boolean;
}

export interface ConsoleFiles {
  /** The file at `path` (relative, `/`-separated, e.g. `index.html`, `assets/x.js`), or undefined. */
  read(path: string): Promise<ConsoleFile | undefined>;
}

/**
 * Only the console's own files and the gateway's API (same origin): no inline script or style, no framing,
 * no plugins, forms post nowhere else. uPlot draws on <canvas>; Preact and uPlot set styles through the
 * CSSOM, which style-src does not restrict.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const CONTENT_TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json",
  svg: "image/svg+xml",
  png: "image/png",
  ico: "image/x-icon",
  woff2: "font/woff2",
  txt: "text/plain; charset=utf-8",
};

/** The content type of a console file by its extension; undefined for kinds the console never ships. */
export function consoleContentType(path: string): string | undefined {
  const dot = path.lastIndexOf(".");
  return dot < 0 ? undefined : CONTENT_TYPES[path.slice(dot + 1).toLowerCase()];
}

/**
 * A request path made a safe relative file path: `/` -> `index.html`; segments of letters, digits, `.`, `_`
 * and `-` only, none starting with a dot (no `..`, no hidden files), no encoded separators. Undefined otherwise.
 */
export function consoleFilePath(requestPath: string): string | undefined {
  if (requestPath === "/" || requestPath === "/index.html") return "index.html";
  const segments = requestPath.split("/").slice(1);
  if (segments.length === 0 || segments.length > 4) return undefined;
  if (!segments.every((segment) => /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/.test(segment))) return undefined;
  const path = segments.join("/");
  return consoleContentType(path) ? path : undefined;
}

export function consoleHeaders(file: ConsoleFile): Headers {
  return new Headers({
    "content-type": file.contentType,
    "cache-control": file.immutable ? "public, max-age=31536000, immutable" : "no-cache",
    "content-security-policy": CONSOLE_CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
  });
}
