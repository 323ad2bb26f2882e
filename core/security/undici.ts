/**
 * undici, imported statically here while this module is itself loaded lazily (guarded-dispatcher.ts): in a
 * split bundle a CommonJS package loaded with `import()` keeps only its `default` export (scripts/build.ts).
 */
export { Agent, buildConnector, fetch } from "undici";
