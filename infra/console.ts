import { ROUTE_FAMILIES } from "../core/routes/table.ts";
import { router } from "./api.ts";

/**
 * The web console on AWS: its built files (scripts/build.ts `console`, into dist/console) uploaded to a bucket
 * of their own at deploy time and served by the gateway's Router at `/`, the route families marked
 * `platform: "static"` (the Router's longest-prefix rule keeps every API prefix on its function). Same origin
 * as the API, so the console's calls carry no CORS and the SSO session cookie works. Hashed assets are cached
 * for a year; index.html is revalidated on every load so a deploy takes effect at once.
 */

export const STATIC_FAMILIES = ROUTE_FAMILIES.filter((family) => family.platform === "static");

export const consoleSite = new sst.aws.StaticSite("Console", {
  path: ".",
  build: { command: "node scripts/build.ts console", output: "dist/console" },
  router: { instance: router, path: "/" },
  assets: {
    fileOptions: [
      { files: "assets/**", cacheControl: "public,max-age=31536000,immutable" },
      { files: "**/*.html", cacheControl: "no-cache" },
    ],
  },
  // `sst dev` runs the gateway locally, which serves the console itself.
  dev: false,
});
