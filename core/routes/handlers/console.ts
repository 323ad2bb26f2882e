import { consoleFilePath, consoleHeaders } from "../../http/console-files.ts";
import type { HandlerMap } from "../../http/context.ts";
import { notFound } from "../../http/errors.ts";

/**
 * The web console (console/): its static files at `/` and `/assets/*`, where the platform has them
 * (services.consoleFiles: the local gateway; on AWS the Router serves them from a bucket instead).
 */
export const handlers: HandlerMap = {
  async consoleFile(request, ctx) {
    const requestPath = ctx.path ?? new URL(request.url).pathname;
    const path = consoleFilePath(requestPath);
    const file = path ? await ctx.services.consoleFiles?.read(path) : undefined;
    if (!file) {
      throw notFound(
        path === "index.html" ? "The console is not built: run `npm run build`." : `No console file at ${requestPath}.`,
        "console_file_not_found",
      );
    }
    return new Response(file.body as Uint8Array<ArrayBuffer>, { status: 200, headers: consoleHeaders(file) });
  },
};
