import { readFile, realpath } from "node:fs/promises";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { type ConsoleFile, type ConsoleFiles, consoleContentType } from "../../http/console-files.ts";

/**
 * The console's built files from a folder (the only place that knows the file system). In the bundle
 * (`npm start`, dist/main.mjs) the folder is dist/console next to it; running the sources (tests), it is the
 * repository's dist/console. Paths come through consoleFilePath (core/http/console-files.ts) and are
 * checked again here: the resolved file (symlinks followed) must stay inside the folder.
 */
export function defaultConsoleDir(): string {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith(".ts")
    ? join(dirname(here), "..", "..", "..", "dist", "console")
    : join(dirname(here), "console");
}

export function folderConsoleFiles(dir = defaultConsoleDir()): ConsoleFiles {
  let root: Promise<string | undefined> | undefined;
  const rootOf = () => {
    root ??= realpath(dir).catch(() => undefined);
    return root;
  };
  return {
    async read(path): Promise<ConsoleFile | undefined> {
      const contentType = consoleContentType(path);
      if (!contentType || path.split("/").some((segment) => segment === "" || segment.startsWith(".")))
        return undefined;
      const base = await rootOf();
      if (!base) {
        // Not built yet: look again next time (npm run build may run while the gateway is up).
        root = undefined;
        return undefined;
      }
      try {
        const file = await realpath(join(base, ...path.split("/")));
        if (!file.startsWith(base + sep)) return undefined;
        return { body: await readFile(file), contentType, immutable: path.startsWith("assets/") };
      } catch {
        return undefined;
      }
    },
  };
}
