/**
 * A sheep's pane as pi draws it: the conversation above, then the editor between two rules and
 * a short footer (cwd, tokens, model). `read` with source "screen" keeps the conversation part.
 */

/** A rule of pi's editor frame: box-drawing dashes, perhaps with a status in them (`── ⠴ Working ──`). */
const RULE = /^\s*─{2,}(.*─{2,})?\s*$/;
/** More lines than this under the last rule are not pi's footer (pi exited and the shell went on). */
const MAX_FOOTER = 4;

/** The pane's text without pi's editor frame and footer, trailing blanks and runs of blank lines. */
export function withoutPiFrame(text: string): string {
  let lines = text.split("\n").map((l) => l.trimEnd());
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  const rules = lines.flatMap((l, i) => (RULE.test(l) ? [i] : []));
  const last = rules[rules.length - 1];
  const upper = rules[rules.length - 2];
  if (last !== undefined && upper !== undefined && lines.length - 1 - last <= MAX_FOOTER) lines = lines.slice(0, upper);
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
