/**
 * How much of the herd is kept: the core bounds its records with these (Herd.bound) and the state
 * file keeps no more when it merges (src/stores/state-retention.ts).
 */
/** Closed sheep whose records are kept, and settled prompts kept per sheep; see bound(). */
export const MAX_CLOSED_KEPT = 64;
export const MAX_SETTLED_KEPT = 32;
/** Background delegations whose message went out, kept so their ids still answer. */
export const MAX_DELIVERED_DELEGATIONS_KEPT = 16;
/** Shepherds whose spend the state file keeps beyond their records (a tally each), the newest. */
export const MAX_TALLIES_KEPT = 64;
/** The most a tally's cost may sum to read back, in the provider's currency: beyond it the tally is corrupt. */
export const MAX_TALLY_COST = 1e9;
/** Follow-up prompts one sheep may hold behind its active one. */
export const MAX_QUEUED = 8;

/** A requestId is the caller's own name for one prompt: any text, but not a novel (the core checks it, the state file reads no longer one). */
export const MAX_REQUEST_ID_CHARS = 256;

/** A prompt's first line as its record keeps it for live views (what a sheep works on). */
export const FIRST_LINE_CHARS = 200;

/** The first non-blank line of a message, cut to FIRST_LINE_CHARS. */
export function firstLineOf(text: string): string {
  const line = text.split(/\r?\n/).find((l) => l.trim() !== "") ?? "";
  const flat = line.trim();
  return flat.length > FIRST_LINE_CHARS ? `${flat.slice(0, FIRST_LINE_CHARS - 1)}…` : flat;
}

/**
 * What a warm sheep holds where its memory cannot be read, in MB: a freshly booted pi is about 115
 * resident, one that came back after tasks about 145 (`npm run bench` measures both).
 */
export const WARM_SHEEP_MB = 145;

/**
 * The default warm memory: four sheep that came back after tasks (4 x 145 MB, rounded up), as many as
 * the default maxParallel runs at once, so every task of a parallel delegation can come back and the
 * next one boots nothing.
 */
export const DEFAULT_WARM_MEMORY_MB = 600;

/** How many warm sheep a memory budget holds. */
export function warmSheepWithin(memoryMb: number): number {
  return Math.floor(memoryMb / WARM_SHEEP_MB);
}

/** The most recent lines of a pane one read returns: the read action's limit and the runtime's clamp alike. */
export const MAX_SCREEN_LINES = 10_000;

/** A name a record keeps (an agent's, a model's, a delegation item's agent): a plain name, not a text. */
export const MAX_NAME_CHARS = 256;

/** Keys (characters) one request of the panel's terminal types at once: a paste longer goes in several. */
export const MAX_TERMINAL_KEYS = 4096;
