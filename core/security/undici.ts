/**
 * undici's public API for the guarded dispatcher. A module of its own so that it can be loaded on first use
 * (functions that never call out, the control plane, skip undici) while undici, a CommonJS package, is imported
 * statically: a dynamic import() of CommonJS loses its named exports in a split bundle.
 */
export { Agent, buildConnector, fetch } from "undici";
