import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { consoleFilePath, consoleHeaders } from "../../../../core/http/console-files.ts";
import { folderConsoleFiles } from "../../../../core/platform/local/console-files.ts";

describe("console file paths", () => {
  it("maps / to index.html and keeps plain asset paths", () => {
    expect(consoleFilePath("/")).toBe("index.html");
    expect(consoleFilePath("/index.html")).toBe("index.html");
    expect(consoleFilePath("/assets/index-3fA9_c.js")).toBe("assets/index-3fA9_c.js");
    expect(consoleFilePath("/assets/index-3fA9_c.css")).toBe("assets/index-3fA9_c.css");
  });

  it("refuses traversal, hidden files, encoded separators and unknown kinds", () => {
    for (const path of [
      "/assets/../main.mjs",
      "/assets/..",
      "/assets/.env",
      "/assets/..%2fmain.mjs",
      "/assets/%2e%2e/x.js",
      "/assets/a\\b.js",
      "/assets//x.js",
      "/assets/x.mjs",
      "/assets/x",
      "/assets/a/b/c/d/e.js",
    ]) {
      expect(consoleFilePath(path), path).toBeUndefined();
    }
  });

  it("caches hashed assets for a year, revalidates index.html, and sends a strict policy", () => {
    const asset = consoleHeaders({ body: new Uint8Array(), contentType: "text/javascript", immutable: true });
    expect(asset.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const page = consoleHeaders({ body: new Uint8Array(), contentType: "text/html", immutable: false });
    expect(page.get("cache-control")).toBe("no-cache");
    expect(page.get("x-content-type-options")).toBe("nosniff");
    const csp = page.get("content-security-policy")!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
  });
});

describe("folder console files", () => {
  const root = mkdtempSync(join(tmpdir(), "console-files-"));
  const dir = join(root, "console");
  mkdirSync(join(dir, "assets"), { recursive: true });
  writeFileSync(join(dir, "index.html"), "<!doctype html>");
  writeFileSync(join(dir, "assets", "app-1.js"), "export {}");
  writeFileSync(join(root, "secret.txt"), "outside");
  symlinkSync(join(root, "secret.txt"), join(dir, "assets", "leak.txt"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("reads files with their content type; assets are immutable", async () => {
    const files = folderConsoleFiles(dir);
    const index = await files.read("index.html");
    expect(index?.contentType).toBe("text/html; charset=utf-8");
    expect(index?.immutable).toBe(false);
    expect(new TextDecoder().decode(index?.body)).toBe("<!doctype html>");
    const script = await files.read("assets/app-1.js");
    expect(script).toMatchObject({ contentType: "text/javascript; charset=utf-8", immutable: true });
  });

  it("never leaves the folder: traversal and symlinks out of it read nothing", async () => {
    const files = folderConsoleFiles(dir);
    expect(await files.read("../secret.txt")).toBeUndefined();
    expect(await files.read("assets/leak.txt")).toBeUndefined();
    expect(await files.read("assets/missing.js")).toBeUndefined();
  });

  it("answers nothing while the console is not built", async () => {
    expect(await folderConsoleFiles(join(root, "absent")).read("index.html")).toBeUndefined();
  });
});
