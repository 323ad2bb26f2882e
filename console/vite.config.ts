import { fileURLToPath } from "node:url";
import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

/**
 * The console's build: static files under dist/console/ that the local gateway serves at `/` and the AWS
 * Router serves from the bucket. `base: "./"` keeps every asset URL relative, so the same files work at any
 * origin; hashed file names let them be cached for a year while index.html is never cached.
 */
const consoleRoot = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root: consoleRoot,
  base: "./",
  plugins: [preact()],
  build: {
    outDir: fileURLToPath(new URL("../dist/console", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "assets",
    // No inline scripts or data: URLs (the Content-Security-Policy allows only same-origin files).
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: "es2022",
  },
  logLevel: "warn",
});
