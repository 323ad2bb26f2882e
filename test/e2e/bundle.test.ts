import { startBundleTarget } from "../helpers/e2e-target.ts";
import { describeGatewaySuite } from "./gateway-suite/index.ts";

/**
 * The end-to-end suite (test/e2e/gateway-suite.ts) against the bundle `npm start` runs: built and started as npm
 * start does (test/helpers/bundle-gateway.ts). Bundling can break what the sources do (a lazily loaded chunk, a
 * CommonJS package); this is where that shows.
 */
describeGatewaySuite(() => startBundleTarget({ ENABLE_PROMETHEUS: "true" }));
