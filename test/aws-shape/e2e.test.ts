import { describeGatewaySuite } from "../e2e/gateway-suite/index.ts";
import { startShapeTarget } from "./target.ts";

/**
 * The end-to-end suite (test/e2e/gateway-suite.ts) against the whole AWS shape (test/aws-shape/shape.ts): every
 * request through the Router to a function URL, on one of at least two instances of its function, with the stores
 * on the emulators, queue work through the event source mappings and polls through the schedule.
 */
describeGatewaySuite(() => startShapeTarget({ environment: { ENABLE_PROMETHEUS: "true" } }));
