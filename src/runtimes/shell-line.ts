/**
 * Builds the one line `pane run` types into a pane's shell. herdr types text, it does not
 * exec argv, so every element is single-quoted: inside '…' a POSIX shell gives no character
 * a meaning except the quote itself, which becomes '\''.
 */
import { ShepherdError } from "../domain/errors.ts";

export function shellQuote(arg: string): string {
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

export function shellLine(argv: readonly string[]): string {
  if (argv.length === 0) throw new ShepherdError("invalid_params", "the launcher command is empty");
  for (const arg of argv) {
    // A newline would submit the line early, and other control bytes are keystrokes.
    if (/[\u0000-\u001f\u007f]/.test(arg)) {
      throw new ShepherdError("invalid_params", "a launcher argument contains a control character; it cannot be typed into a pane");
    }
  }
  return argv.map(shellQuote).join(" ");
}
