// Option parsing with herdr 0.8.0's strictness: unknown options (including `--json` on
// control commands) and `--opt=value` forms are usage errors, and `--focus`/`--no-focus`
// are order-sensitive (the last one wins).
import { UsageError } from "./errors.mjs";

/**
 * @typedef {object} Spec
 * @property {string[]} [values]   options that take one value
 * @property {string[]} [repeated] options that take one value and may repeat (e.g. --env)
 * @property {string[]} [flags]    boolean options
 * @property {number} [minPositionals]
 * @property {number} [maxPositionals] Infinity for trailing text
 * @property {boolean} [idFirst]   the first argument must be the positional id (0.8.0 `pane read`)
 */

/**
 * @param {string[]} args
 * @param {Spec} spec
 */
export function parseArgs(args, spec) {
  const values = new Set(spec.values ?? []);
  const repeated = new Set(spec.repeated ?? []);
  const flags = new Set(spec.flags ?? []);
  /** @type {Record<string, string>} */
  const opts = {};
  /** @type {Record<string, string[]>} */
  const multi = {};
  /** @type {Set<string>} */
  const seenFlags = new Set();
  /** @type {boolean | undefined} */
  let focus;
  /** @type {string[]} */
  const positionals = [];

  if (spec.idFirst && (args.length === 0 || args[0].startsWith("-"))) {
    throw new UsageError("missing pane id (it must come first)");
  }
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith("-") && a.length > 1) {
      if (a === "--focus" || a === "--no-focus") {
        if (!flags.has(a)) throw new UsageError(`unknown option: ${a}`);
        focus = a === "--focus";
      } else if (flags.has(a)) {
        seenFlags.add(a);
      } else if (values.has(a) || repeated.has(a)) {
        const v = args[i + 1];
        if (v === undefined) throw new UsageError(`missing value for ${a}`);
        i++;
        if (repeated.has(a)) {
          multi[a] ??= [];
          multi[a].push(v);
        } else opts[a] = v;
      } else {
        throw new UsageError(`unknown option: ${a}`);
      }
    } else {
      positionals.push(a);
    }
  }
  const min = spec.minPositionals ?? 0;
  const max = spec.maxPositionals ?? 0;
  if (positionals.length < min) throw new UsageError("missing argument");
  if (positionals.length > max) throw new UsageError(`unexpected argument: ${positionals[max]}`);
  return { opts, multi, flags: seenFlags, focus, positionals };
}

/** `--env K=V` pairs; a pair without `=` is a usage error as in herdr. */
export function parseEnvPairs(/** @type {string[] | undefined} */ pairs) {
  /** @type {Record<string, string>} */
  const env = {};
  for (const p of pairs ?? []) {
    const eq = p.indexOf("=");
    if (eq <= 0) throw new UsageError(`invalid --env value (expected KEY=VALUE): ${p}`);
    env[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return env;
}
