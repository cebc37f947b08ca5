import { ShepherdError } from "../domain/errors.ts";

export { quoteWord } from "../actions/command-steps.ts";

export interface Token {
  text: string;
  /** Offsets in the input, so a completion can replace exactly this token. */
  start: number;
  end: number;
}

/**
 * Splits command arguments into words: whitespace separates, "double" and 'single' quotes group
 * (so labels and paths may hold spaces), a backslash escapes the next character outside single
 * quotes. Nothing here ever reaches a shell. With `partial`, an unterminated quote is accepted
 * (the user is still typing it); otherwise it is an error.
 */
export function tokenize(input: string, partial = false): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    while (i < input.length && /\s/.test(input[i]!)) i++;
    if (i >= input.length) break;
    const start = i;
    let text = "";
    let quote: '"' | "'" | undefined;
    for (; i < input.length; i++) {
      const c = input[i]!;
      if (quote) {
        if (c === quote) quote = undefined;
        else if (c === "\\" && quote === '"' && (input[i + 1] === '"' || input[i + 1] === "\\")) text += input[++i];
        else text += c;
      } else if (c === '"' || c === "'") quote = c;
      else if (c === "\\" && i + 1 < input.length) text += input[++i];
      else if (/\s/.test(c)) break;
      else text += c;
    }
    if (quote && !partial) throw new ShepherdError("invalid_params", `unterminated ${quote} quote in "${input}".`);
    tokens.push({ text, start, end: i });
  }
  return tokens;
}
