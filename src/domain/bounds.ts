/**
 * How much of the herd is kept: the core bounds its records with these (Herd.bound) and the state
 * file keeps no more when it merges (src/protocol/state-retention.ts).
 */
/** Closed sheep whose records are kept, and settled prompts kept per sheep; see bound(). */
export const MAX_CLOSED_KEPT = 64;
export const MAX_SETTLED_KEPT = 32;
/** Background delegations whose message went out, kept so their ids still answer. */
export const MAX_DELIVERED_DELEGATIONS_KEPT = 16;
/** Follow-up prompts one sheep may hold behind its active one. */
export const MAX_QUEUED = 8;
