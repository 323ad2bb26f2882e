import { existsSync, readFileSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join, normalize, relative, resolve, sep } from "node:path";
import { consoleContentType } from "../../core/http/console-files.ts";
import type { StaticSiteDefinition } from "./definition.ts";

/**
 * The console's sst.aws.StaticSite behind the Router: the files its build wrote, served as from its private bucket
 * (GET and HEAD; `/` is index.html), with the Cache-Control of the first `assets.fileOptions` entry whose
 * pattern matches the file, as SST sets it on upload. A key that is not in the bucket gets S3's answer to a
 * reader without list permission: 403 AccessDenied.
 */
export function staticSite(site: StaticSiteDefinition, root: string) {
  const folder = resolve(root, site.output);
  const patterns = site.fileOptions.map((option) => ({
    matches: [option.files].flat().map(globToRegExp),
    cacheControl: option.cacheControl,
    contentType: option.contentType,
  }));
  return (request: IncomingMessage, response: ServerResponse): void => {
    const file = fileFor(request, folder);
    if (!file) {
      s3Error(response, request.method === "GET" || request.method === "HEAD" ? 403 : 405);
      return;
    }
    const key = relative(folder, file).split(sep).join("/");
    const options = patterns.find((pattern) => pattern.matches.some((match) => match.test(key)));
    const body = readFileSync(file);
    response.writeHead(200, {
      "content-type": options?.contentType ?? consoleContentType(key) ?? "application/octet-stream",
      "content-length": body.byteLength,
      ...(options?.cacheControl ? { "cache-control": options.cacheControl } : {}),
      etag: `"${body.byteLength.toString(16)}-${statSync(file).mtimeMs.toString(16)}"`,
      via: "2.0 static-site.cloudfront.net (CloudFront)",
      "x-cache": "Miss from cloudfront",
    });
    response.end(request.method === "HEAD" ? undefined : body);
  };
}

/** The file a GET or HEAD names inside the site's folder (`/` is index.html), if it is there. */
function fileFor(request: IncomingMessage, folder: string): string | undefined {
  if (request.method !== "GET" && request.method !== "HEAD") return undefined;
  let path: string;
  try {
    path = decodeURIComponent((request.url ?? "/").split("?")[0]!);
  } catch {
    return undefined;
  }
  const key = path.endsWith("/") ? `${path.slice(1)}index.html` : path.slice(1);
  const file = normalize(join(folder, key));
  if (relative(folder, file).startsWith("..") || !existsSync(file) || !statSync(file).isFile()) return undefined;
  return file;
}

/** SST's file patterns: `**` any depth, `*` within a segment. */
function globToRegExp(glob: string): RegExp {
  const source = glob
    .split("**")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*"))
    .join(".*");
  return new RegExp(`^${source.replace(/^\.\*\//, "(?:.*/)?")}$`);
}

function s3Error(response: ServerResponse, status: number): void {
  const code = status === 405 ? "MethodNotAllowed" : "AccessDenied";
  response.writeHead(status, { "content-type": "application/xml" });
  response.end(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>Access Denied</Message></Error>`,
  );
}

export function siteBuilt(site: StaticSiteDefinition, root: string): boolean {
  return existsSync(join(resolve(root, site.output), "index.html"));
}
