/**
 * Lengths of identifiers in request bodies (no zod here: the hand-written checks and the passthrough route use
 * them too). Such values are kept in logs, analytics keys and caches, so they are bounded.
 */

/** Longest model name accepted: provider model ids, deployment names and ARNs are far shorter. */
export const MAX_MODEL_LENGTH = 256;
