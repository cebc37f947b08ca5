/**
 * A sheep's pane as pi draws it: the conversation above, then the editor between two rules and
 * a short footer (cwd, tokens, model). `read` with source "screen" keeps the conversation part.
 */

/** A rule of pi's editor frame: box-drawing dashes, perhaps with a status in them (`── ⠴ Working ──`). */
const RULE = /^\s*─{2,}(.*─{2,})?\s*$/;
/** More lines than this under the last rule are not pi's footer (pi exited and the shell went on). */
const MAX_FOOTER = 4;

/**
 * What tmux writes where a pane's cursor was when its program ended (`remain-on-exit`): inside
 * pi's frame, or run on from pi's full-width footer line when wrapped lines are joined. Not pi's,
 * so it stays, on a line of its own at the end.
 */
const AFTER_PI = /^Pane is dead \(/;
const AFTER_PI_ANYWHERE = /Pane is dead \(/;

/** The pane's text without pi's editor frame and footer, trailing blanks and runs of blank lines. */
export function withoutPiFrame(text: string): string {
  const all = text.split("\n").flatMap((l) => {
    const at = l.search(AFTER_PI_ANYWHERE);
    return (at > 0 ? [l.slice(0, at), l.slice(at)] : [l]).map((x) => x.trimEnd());
  });
  const after = all.filter((l) => AFTER_PI.test(l));
  let lines = all.filter((l) => !AFTER_PI.test(l));
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  const rules = lines.flatMap((l, i) => (RULE.test(l) ? [i] : []));
  const last = rules[rules.length - 1];
  const upper = rules[rules.length - 2];
  if (last !== undefined && upper !== undefined && lines.length - 1 - last <= MAX_FOOTER) lines = lines.slice(0, upper);
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  lines.push(...after);
  const out: string[] = [];
  for (const l of lines) if (l !== "" || (out.length > 0 && out[out.length - 1] !== "")) out.push(l);
  while (out.length && out[out.length - 1] === "") out.pop();
  return out.join("\n");
}

/** The last `n` lines of a text. */
export function lastLines(text: string, n: number): string {
  const lines = text.split("\n");
  return lines.slice(Math.max(0, lines.length - n)).join("\n");
}
